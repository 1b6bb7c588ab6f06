//! Configuration of a NUMA run: the machine (numa-page-migration.txt section 4.1), the
//! reference history kept per page and processor (section 2.1), the migration mechanism
//! (section 3) and the workload. Read from JSON (the TOML structure, converted by the
//! Python front); every key has a default but the workload, unknown keys are errors.

use serde::Deserialize;

use crate::{Error, Result};

/// Access times of section 4.1: with the software address translation of the
/// experiments (a local shared access 44 us, a remote one five times that) or the
/// Butterfly's hardware alone (1.75 us and 8.75 us).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    #[default]
    Software,
    Hardware,
}

impl Preset {
    pub fn local_ns(self) -> f64 {
        match self {
            Preset::Software => 44_000.0,
            Preset::Hardware => 1_750.0,
        }
    }
}

/// How pages move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Migration {
    /// No migration: pages stay where the placement put them.
    #[default]
    None,
    /// Each page migrates to a node just before that node's first use of it while it
    /// lives elsewhere, at migration cost, paid by the referencing processor.
    Foresight,
    /// Migration daemons (section 3).
    Daemons,
}

/// The order in which a daemon examines the copies of its entries. The paper fixes what
/// is examined, not the loop's order: section 3, each daemon "steps through all of the
/// copies of the page table applying the migration policy"; section 3.1, "an examination
/// phase (in which it examines each copy of each page table entry)", locking one copy at
/// a time, then a migration phase. Either order reads and clears every copy of every
/// entry of the daemon's share once a pass; they differ in when each node's history of a
/// page is read (docs/numa.md, "Why the daemons ping-pong").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExamineOrder {
    /// Entry by entry: every copy of one entry, then the next entry (the first version;
    /// section 3.1's "each copy of each page table entry"): all nodes' histories of a
    /// page are read within a few examinations of each other.
    #[default]
    Entries,
    /// Copy by copy: every entry of its share in node 0's copy of the page table, then in
    /// node 1's, and so on (section 3's "steps through all of the copies of the page
    /// table"): node k's history of a page is read k/nodes of a pass after node 0's.
    Copies,
}

/// The reference history per page and processor (section 2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// A Referenced bit, set on each reference, cleared by the daemon.
    Referenced,
    /// Aging with `k` bits: at each examination the daemon shifts the software copy
    /// right and inserts the Referenced bit as the most significant of `k` bits.
    Aging(u8),
    /// A Usage field counting references, cleared by the daemon.
    Usage,
}

impl History {
    pub fn parse(text: &str) -> Result<History> {
        let t = text.trim().to_ascii_lowercase();
        let bad = || Error::invalid("numa.history", format!("expected \"usage\", \"referenced\" or \"aging:K\" with K from 1 to 8, got '{text}'"));
        match t.as_str() {
            "usage" => Ok(History::Usage),
            "referenced" => Ok(History::Referenced),
            _ => {
                let k: u8 = t.strip_prefix("aging:").ok_or_else(bad)?.parse().map_err(|_| bad())?;
                if (1..=8).contains(&k) {
                    Ok(History::Aging(k))
                } else {
                    Err(bad())
                }
            }
        }
    }

    pub fn label(self) -> String {
        match self {
            History::Referenced => "referenced".into(),
            History::Aging(k) => format!("aging:{k}"),
            History::Usage => "usage".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NumaConfig {
    /// Bytes per page (a power of two from 16 B).
    pub page_size: u64,
    pub preset: Preset,
    /// A local shared access in ns; 0 takes the preset's.
    pub local_ns: f64,
    /// A remote access costs this many local ones (section 4.1: five).
    pub remote_factor: f64,
    /// `"usage"`, `"referenced"` or `"aging:K"`.
    pub history: String,
    pub migration: Migration,
    /// Migration daemons, each on its own processor with its own partition of the pages.
    pub daemons: u32,
    /// How long a daemon blocks between passes, in microseconds (section 5: 0, 50, 10000).
    pub block_us: f64,
    /// Daemon time to lock, read and clear one copy of a page-table entry.
    pub examine_ns: f64,
    /// The daemons' examination order: `"entries"` (entry by entry, the default) or
    /// `"copies"` (copy by copy); section 3 and 3.1 leave it open.
    pub examine_order: ExamineOrder,
    /// Time to copy one byte of a page to another node.
    pub copy_ns_per_byte: f64,
    /// Time to update one copy of a page-table entry when its page moves.
    pub pte_update_ns: f64,
    /// Private work after each shared operation's first reference, in ns (section 4:
    /// "each process's address space has mapped in that process's code and private
    /// data ... in its local memory"; section 6: "only shared data references use the
    /// page tables"). The computation and the private references between two shared
    /// references (the vector element, the indices, the arithmetic) take processor time
    /// but no entry lock, no reference history and no shared page. Absent: the
    /// workload's own value, calibrated from the paper's no-migration row
    /// (docs/numa.md, "Private work"); 0: shared references alone take time (the first
    /// version).
    pub private_ns: Option<f64>,
    /// Private work after each repeat reference of an operation, in ns (section 4.2's
    /// repeat references: each repeat is a full shared reference through the start and
    /// end macros, plus this much loop work; the entry's own computation is
    /// `private_ns`, once). Absent: the workload's calibrated value; 0: none.
    pub repeat_private_ns: Option<f64>,
    /// The nodes' memory modules as servers (sections 1.1 and 5.3: memory and switch
    /// contention): every shared access, examination, page copy and entry update
    /// occupies the module of the node it reaches, first come first served (on by
    /// default). false: modules are never busy (the first version).
    pub memory_contention: bool,
    /// A module's service time per word, in ns (with `memory_contention`).
    pub memory_ns: f64,
    /// Seed of the workload's random choices.
    pub seed: u64,
    /// The workload: `{"name": ..., "params": {...}}`.
    pub workload: WorkloadConfig,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    pub name: String,
    pub params: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Default for NumaConfig {
    fn default() -> Self {
        NumaConfig {
            page_size: 1024,
            preset: Preset::Software,
            local_ns: 0.0,
            remote_factor: 5.0,
            history: "usage".into(),
            migration: Migration::None,
            daemons: 1,
            block_us: 0.0,
            // derived from section 4.1's hardware times (local word 1.75 us, remote 8.75 us):
            // examining or updating an entry copy on another node is about four remote
            // word operations (lock, read, write back, unlock); copying a page moves each
            // 4-byte word with a remote read and a local write
            examine_ns: 35_000.0,
            examine_order: ExamineOrder::default(),
            copy_ns_per_byte: 2_625.0,
            pte_update_ns: 35_000.0,
            private_ns: None,
            repeat_private_ns: None,
            memory_contention: true,
            // at most section 4.1's local assignment (1.75 us), of which the memory
            // cycle is a part: a word's service by the module and its switch port
            memory_ns: 1_000.0,
            seed: 0,
            workload: WorkloadConfig::default(),
        }
    }
}

impl NumaConfig {
    /// Parses the JSON form; a bad value's error names its key (`numa.KEY`).
    pub fn from_json(text: &str) -> Result<NumaConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: NumaConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            // serde_json appends " at line L column C" of the JSON, meaningless to a TOML user
            let inner = match inner.rfind(" at line ") {
                Some(i) => inner[..i].to_string(),
                None => inner,
            };
            Error::invalid(if path == "." { "numa".to_string() } else { format!("numa.{path}") }, inner)
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<()> {
        if self.page_size < 16 || !self.page_size.is_power_of_two() || self.page_size > 1 << 30 {
            return Err(Error::invalid("numa.page_size", format!("expected a power of two from 16 bytes to 1 GiB, got {}", self.page_size)));
        }
        for (key, v) in [
            ("numa.local_ns", self.local_ns),
            ("numa.block_us", self.block_us),
            ("numa.examine_ns", self.examine_ns),
            ("numa.copy_ns_per_byte", self.copy_ns_per_byte),
            ("numa.pte_update_ns", self.pte_update_ns),
            ("numa.private_ns", self.private_ns.unwrap_or(0.0)),
            ("numa.repeat_private_ns", self.repeat_private_ns.unwrap_or(0.0)),
            ("numa.memory_ns", self.memory_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::invalid(key, format!("expected a number >= 0, got {v}")));
            }
        }
        if !(self.remote_factor.is_finite() && self.remote_factor >= 1.0) {
            return Err(Error::invalid("numa.remote_factor", format!("expected a number >= 1, got {}", self.remote_factor)));
        }
        // every cost of one event at most one simulated day, as in the timed system
        // (docs/system-config.md, Limits): the clock counts nanoseconds in 64 bits
        let day = crate::system::config::MAX_DURATION_NS;
        let show = crate::system::config::show;
        for (key, ns) in [
            ("numa.local_ns", self.local_ns),
            ("numa.remote_factor", self.local_ns() * self.remote_factor),
            ("numa.block_us", self.block_us * 1e3),
            ("numa.examine_ns", self.examine_ns),
            ("numa.copy_ns_per_byte", self.copy_ns_per_byte * self.page_size as f64),
            ("numa.pte_update_ns", self.pte_update_ns * u16::MAX as f64),
            ("numa.private_ns", self.private_ns.unwrap_or(0.0)),
            ("numa.repeat_private_ns", self.repeat_private_ns.unwrap_or(0.0)),
            ("numa.memory_ns", self.memory_ns * (self.page_size as f64 / 4.0).max(4.0)),
        ] {
            if ns > day {
                return Err(Error::invalid(
                    key,
                    format!("expected costs of at most one simulated day ({} ns) per access, private work, daemon pass, examination, migration (of a page, with up to 65535 nodes) or page at a memory module, got {} ns", show(day), show(ns)),
                ));
            }
        }
        if self.migration == Migration::Daemons && !(1..=64).contains(&self.daemons) {
            return Err(Error::invalid("numa.daemons", format!("expected 1 to 64 daemons, got {}", self.daemons)));
        }
        History::parse(&self.history)?;
        if self.workload.name.trim().is_empty() {
            return Err(Error::invalid("numa.workload", "expected a workload name, e.g. workload = { name = \"vecmat\" }"));
        }
        Ok(())
    }

    pub fn local_ns(&self) -> f64 {
        if self.local_ns > 0.0 {
            self.local_ns
        } else {
            self.preset.local_ns()
        }
    }

    /// The workload's parameters as text, the form the workload registry reads.
    pub fn workload_params(&self) -> Vec<(String, String)> {
        self.workload
            .params
            .iter()
            .map(|(k, v)| (k.clone(), match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }))
            .collect()
    }
}
