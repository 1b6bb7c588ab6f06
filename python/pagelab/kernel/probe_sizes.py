"""The probe's default sizes (:mod:`.probe`), apart from it so that the command line's
parser shows them without loading the probe and what it imports."""

#: a 256 MiB file, 2,000 random reads, 20,000 pages (80 MB) for the faults
PROBE_MB = 256
PROBE_READS = 2000
PROBE_PAGES = 20000
