//! Configuration of a timed-system run. The engine never reads files: the Python front
//! loads TOML and hands the same structure over as JSON ([`SystemConfig::from_json`]);
//! unknown keys are errors that name their path (`processes[1].params`).

use serde::{Deserialize, Serialize};

use super::async_writes::AsyncWritesKind;
use super::disk::DiskConfig;
use crate::policy::PolicyKind;
use crate::source::SourceSpec;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    pub system: MachineConfig,
    #[serde(default)]
    pub disk: DiskConfig,
    #[serde(default)]
    pub token: TokenConfig,
    #[serde(default)]
    pub load_control: LoadControlConfig,
    #[serde(default)]
    pub swap: SwapConfig,
    /// Gang scheduling of parallel jobs over nodes (gang-adaptive-paging.txt); each
    /// process is then a job with one process per node.
    #[serde(default)]
    pub gang: Option<GangConfig>,
    pub processes: Vec<ProcessConfig>,
}

/// How the jobs of a gang run share the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GangMode {
    /// Time-sharing by a scheduling table: every quantum, all processes of the running
    /// job stop and all of the next job's start, on every node at once (section 2).
    #[default]
    Gang,
    /// The jobs one after the other, each to completion: the paper's baseline with no
    /// paging at job switches (section 4.1).
    Batch,
}

/// The adaptive paging mechanisms of gang-adaptive-paging.txt section 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// Selective page-out (section 3.1, figure 2).
    So,
    /// Aggressive page-out (section 3.2, figure 3).
    Ao,
    /// Adaptive page-in (section 3.3, figure 4).
    Ai,
    /// Background writing of dirty pages (section 3.4).
    Bg,
}

/// Gang scheduling and adaptive paging (gang-adaptive-paging.txt). Every node has the
/// `[system]` frames, its own swap disk (`[disk]`) and its own page-out daemon.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct GangConfig {
    pub nodes: u32,
    pub mode: GangMode,
    /// Time quantum of the scheduling table (section 4: five minutes).
    pub quantum_s: f64,
    /// Any combination of "so", "ao", "ai", "bg"; none is the original paging.
    pub mechanisms: Vec<Mechanism>,
    /// Background writing runs during this last fraction of a quantum (section 3.4: 10%).
    pub bg_fraction: f64,
    /// Pages background writing puts in one write, issued only when the disk is idle.
    pub bg_batch_pages: u32,
    /// Fixed software cost of a barrier across nodes.
    pub barrier_us: f64,
    /// Latency of one message over the interconnect; a barrier takes ceil(log2(nodes))
    /// rounds of messages (a tree barrier), so it releases every process
    /// barrier_us + rounds x message_us after the last arrival (> 0 with > 1 node).
    pub message_us: f64,
    /// Memory locked on every node (the paper's mlock trick, section 4): these frames
    /// are taken from `system.frames`.
    pub locked_mb: f64,
    /// Largest read adaptive page-in issues (pages consecutive on swap), with
    /// `ai_reads = "block"`.
    pub ai_block_pages: u32,
    /// How adaptive page-in reads the recorded pages (section 3.3, figure 4). `fault`
    /// (the paper's kernel): one artificial fault per recorded page, in the recorded
    /// (virtual) order, each raised when the previous one is done, through the node's
    /// fault path, read-around included (Linux 2.2.19's `swap_in`, mm/page_alloc.c,
    /// calls `swapin_readahead` on every swap-cache miss); `single`: the same faults
    /// reading only the faulting page (pagelab 0.1.0+r4's `fault`); `block`: block reads
    /// of up to `ai_block_pages` pages consecutive on swap, in slot order, all queued at
    /// once (pagelab before issue 16).
    pub ai_reads: AiReads,
    /// How a parallel job's data is spread over the nodes (section 4.2). `split` (the
    /// paper's parallel runs, strong scaling): every node runs the job's serial
    /// reference stream filtered to the references its share of the pages makes it do,
    /// owner computes with the shared pages replicated ([`super::partition`]);
    /// `split_neighbours`: the same stream filtered by issue 16's rule (a node also does
    /// the references next to its own); `copies`: every node runs a whole serial
    /// instance with its own seed (pagelab before issue 16).
    pub partition: PartitionKind,
    /// With `partition = "split"`: a page is shared (replicated on every node that uses
    /// it, its references done by the node whose work they sit in) when its records
    /// outnumber this many times the mean over the job's pages ([`super::partition`];
    /// the paper gives no rule: 4 by default, a sensitivity range).
    pub shared_ratio: f64,
    /// Share of each node in a job's data with `partition = "split"` or
    /// `"split_neighbours"` (one positive number per node, normalised); empty: equal
    /// shares.
    pub node_shares: Vec<f64>,
    /// Frames of each node (one per node, before `locked_mb`); empty: `system.frames`
    /// on every node.
    pub node_frames: Vec<u64>,
    /// Interconnect bandwidth for the data exchanged at barriers with `partition =
    /// "split"` (section 4: 100 Mb/s Ethernet); a barrier also waits for the node that
    /// receives the most pages to receive them. 0: the exchange takes no time.
    pub exchange_mbit_s: f64,
}

/// How adaptive page-in reads (see [`GangConfig::ai_reads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AiReads {
    #[default]
    Fault,
    Single,
    Block,
}

/// How a parallel job's data is spread over the nodes (see [`GangConfig::partition`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionKind {
    /// Split, owner computes with shared pages replicated ([`super::partition::SplitRule::Owner`]).
    #[default]
    Split,
    /// Split, each node also keeping the records next to its own
    /// ([`super::partition::SplitRule::Neighbours`], the rule of issue 16).
    SplitNeighbours,
    Copies,
}

impl PartitionKind {
    /// The rule that splits the serial stream; None: copies.
    pub fn split_rule(self) -> Option<super::partition::SplitRule> {
        match self {
            PartitionKind::Split => Some(super::partition::SplitRule::Owner),
            PartitionKind::SplitNeighbours => Some(super::partition::SplitRule::Neighbours),
            PartitionKind::Copies => None,
        }
    }
}

impl Default for GangConfig {
    fn default() -> Self {
        GangConfig {
            nodes: 1,
            mode: GangMode::Gang,
            quantum_s: 300.0,
            mechanisms: Vec::new(),
            bg_fraction: 0.1,
            bg_batch_pages: 16,
            barrier_us: 20.0,
            message_us: 80.0,
            locked_mb: 0.0,
            ai_block_pages: 64,
            ai_reads: AiReads::Fault,
            partition: PartitionKind::Split,
            shared_ratio: super::partition::HOT_RATIO,
            node_shares: Vec::new(),
            node_frames: Vec::new(),
            exchange_mbit_s: 100.0,
        }
    }
}

impl GangConfig {
    pub fn has(&self, m: Mechanism) -> bool {
        self.mechanisms.contains(&m)
    }

    /// From the last arrival at a barrier to the release of every process.
    pub fn barrier_delay_ns(&self) -> u64 {
        let rounds = (self.nodes.max(1) as f64).log2().ceil();
        ((self.barrier_us + rounds * self.message_us) * 1e3).round() as u64
    }

    /// Frames of node `k` (before the locked memory).
    pub fn node_frames(&self, k: usize, frames: u64) -> u64 {
        self.node_frames.get(k).copied().unwrap_or(frames)
    }

    /// Nanoseconds to receive one page over the interconnect.
    pub fn exchange_ns_per_page(&self, page_size: u64) -> f64 {
        if self.exchange_mbit_s > 0.0 { page_size as f64 * 8.0 / (self.exchange_mbit_s * 1e6) * 1e9 } else { 0.0 }
    }

    /// Frames left to the jobs on a node after the locked memory.
    pub fn usable_frames(&self, frames: u64, page_size: u64) -> u64 {
        let locked = (self.locked_mb * 1048576.0 / page_size as f64).ceil() as u64;
        frames.saturating_sub(locked)
    }
}

/// Page-out clustering (mclustering-pageout.txt section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusteringKind {
    /// Every dirty victim is written alone (and keeps its swap slot for life).
    #[default]
    None,
    /// BSD VM: a victim and its dirty neighbours in virtual space go out in one write.
    Bsd,
    /// mClustering (Algorithm 1): whole clusters of successive victims collect in a
    /// buffer that is written in one request.
    Mclustering,
}

/// Read-around on a page fault (mclustering-pageout.txt section 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadAroundKind {
    /// The system's own: `Linux` under `reclaim = "linux22"` outside a gang run (Linux
    /// 2.2.14 reads around every swap-in, mm/page_alloc.c `swapin_readahead`), `Bsd`
    /// under `reclaim = "freebsd8"` (8.2 `vm_fault`'s read-behind/ahead), `None`
    /// otherwise. Resolved by [`SystemConfig::read_around`].
    #[default]
    Auto,
    None,
    /// BSD/FreeBSD: the pages adjacent to the faulting one both in virtual space and on
    /// swap, within an aligned window of `read_window` slots.
    Bsd,
    /// Linux: the used slots of the aligned window of 2^page_cluster slots around the
    /// faulting slot, whoever owns them.
    Linux,
}

/// The swap path: clustering of page-outs, their buffer, swap allocation, read-around.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwapConfig {
    pub clustering: ClusteringKind,
    /// Pages per cluster: 16 in 4.4BSD (the paper), 32 in later FreeBSD.
    pub max_cluster: u32,
    /// Pages traversed backward from the victim before going forward (8).
    pub cluster_back: u32,
    /// mClustering's buffer of m pages (16).
    pub buffer_pages: u32,
    pub read_around: ReadAroundKind,
    /// BSD read-around window in slots (16).
    pub read_window: u32,
    /// Linux read-around: 2^page_cluster slots. None: as Linux 2.2.14 sets it at boot
    /// from the memory size (mm/swap.c `swap_setup`), see [`SystemConfig::page_cluster`].
    pub page_cluster: Option<u32>,
    /// Fraction of swap slots occupied at random before the run (section 3.4).
    pub fragmentation: f64,
    /// Without clustering: a page written after it came back from swap gives up its slot
    /// (Linux 2.2's swap cache: a write fault deletes the page from it), so its next
    /// page-out takes the next free slot and successive page-outs land on successive
    /// slots. Off: a page keeps the slot of its first page-out for life. Clustering
    /// always allocates afresh.
    pub free_on_write: bool,
    /// Linux 2.2.14's swap cache (mm/swap_state.c, mm/filemap.c `shrink_mmap`): a page
    /// `swap_out` unmaps stays in memory, in the swap cache, until `shrink_mmap` frees it;
    /// a fault on it meanwhile is a minor fault. None: on under `reclaim = "linux22"`
    /// with `system.free_pages = "linux22"`, off otherwise ([`SystemConfig::swap_cache`]).
    /// Off: an unmapped page is gone at once (a dirty one once its write completes).
    pub swap_cache: Option<bool>,
    /// The bound on asynchronous page-out writes in flight and what the writer does at
    /// it (Linux 2.2 `rw_swap_page_base`, FreeBSD 8.2 `swap_pager_putpages`;
    /// async_writes.rs).
    pub async_writes: AsyncWritesKind,
    /// The bound: pages (Linux 2.2, default `pager_daemon.swap_cluster` = 32) or write
    /// requests (FreeBSD 8.2, default `vm.swap_async_max` = 4); None: the kernel's.
    pub async_write_max: Option<u32>,
}

impl SwapConfig {
    /// A stale swap copy (the page was written since) gives up its slot at once.
    pub fn frees_stale_slots(&self) -> bool {
        self.clustering != ClusteringKind::None || self.free_on_write
    }
}

impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig {
            clustering: ClusteringKind::None,
            max_cluster: 16,
            cluster_back: 8,
            buffer_pages: 16,
            read_around: ReadAroundKind::Auto,
            read_window: 16,
            page_cluster: None,
            fragmentation: 0.0,
            free_on_write: false,
            swap_cache: None,
            async_writes: AsyncWritesKind::Kernel,
            async_write_max: None,
        }
    }
}

/// One node: its frames, CPU costs, scheduler and memory-manager settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Frames for user pages.
    pub frames: u64,
    #[serde(default = "default_page_size")]
    pub page_size: u64,
    /// Round-robin time slice (Linux 2.2 gives 20 ticks = 200 ms at most; 100 ms here).
    #[serde(default = "default_quantum_ms")]
    pub quantum_ms: f64,
    /// CPU cost of one reference unless a process sets its own.
    #[serde(default = "default_cpu_ns_per_ref")]
    pub cpu_ns_per_ref: f64,
    /// CPU cost per instruction of a trace's gaps, for processes with `use_gaps`.
    #[serde(default = "default_cpu_ns_per_instruction")]
    pub cpu_ns_per_instruction: f64,
    /// CPU cost of a minor fault (first touch: a zero-filled frame).
    #[serde(default = "default_minor_fault_ns")]
    pub minor_fault_ns: f64,
    /// Kernel CPU cost of a major fault besides the disk read.
    #[serde(default = "default_major_fault_cpu_ns")]
    pub major_fault_cpu_ns: f64,
    #[serde(default)]
    pub reclaim: ReclaimKind,
    /// With `reclaim = "policy"`: the replacement policy that picks victims, by name as
    /// in replay (`"arc"`, `"lirs"`, `"last-dynamic:60"`, ...).
    #[serde(default)]
    pub policy: Option<String>,
    /// A Dead-List beside reclaim (predictive-replacement.txt section 5.2): only
    /// `"dp-approx"` or `"dp-approx:A"`, the OS-implementable predictor.
    #[serde(default)]
    pub dead_list: Option<String>,
    /// Pages a direct reclaim frees at once (Linux 2.2 SWAP_CLUSTER_MAX = 32).
    #[serde(default = "default_reclaim_batch")]
    pub reclaim_batch: u32,
    /// With `reclaim = "linux22"`: how `swap_out` picks the process to take pages from.
    #[serde(default)]
    pub swap_out: SwapOutRule,
    /// With `reclaim = "linux22"`: what frees memory and when. None: `linux22` outside a
    /// gang run, `batch` in one ([`SystemConfig::free_pages`]).
    #[serde(default)]
    pub free_pages: Option<FreePagesRule>,
    #[serde(default = "default_sample_ms")]
    pub sample_ms: f64,
    /// Default seed of the processes' workloads.
    #[serde(default)]
    pub seed: u64,
    /// Swap slots; 0 sizes the swap area to the processes' pages.
    #[serde(default)]
    pub swap_slots: u64,
    #[serde(default)]
    pub watermarks: Option<Watermarks>,
    /// Record each process's per-page state at every sample (figure 11 of
    /// token-ordered-lru.txt).
    #[serde(default)]
    pub space_time: bool,
    #[serde(default = "default_space_time_buckets")]
    pub space_time_buckets: u32,
    /// `[system.freebsd]`: the rules of `reclaim = "freebsd8"` (freebsd.rs).
    #[serde(default)]
    pub freebsd: super::freebsd::FreeBsdConfig,
}

impl MachineConfig {
    /// The policy of `reclaim = "policy"` (None for the other reclaim kinds). Policies
    /// that need the future (OPT) or size memory themselves (Working Set, PFF) cannot
    /// pick victims in a machine of fixed memory that runs forward in time.
    pub fn reclaim_policy(&self) -> Result<Option<PolicyKind>> {
        let key = "system.policy";
        match (&self.reclaim, &self.policy) {
            (ReclaimKind::Policy, None) => Err(Error::invalid(key, "reclaim = \"policy\" needs a policy name, e.g. policy = \"arc\"")),
            (ReclaimKind::Policy, Some(name)) => {
                let kind = PolicyKind::from_name(name).map_err(|e| rekey(e, key))?;
                if kind.needs_future() || kind.variable_size() {
                    return Err(Error::invalid(key, format!("'{name}' cannot run in the timed system (it needs the future or sizes memory itself)")));
                }
                Ok(Some(kind))
            }
            (_, Some(_)) => Err(Error::invalid(key, "is used only with reclaim = \"policy\"")),
            (_, None) => Ok(None),
        }
    }

    /// DP-Approx's weight `a` when `dead_list` is set.
    pub fn dead_list_weight(&self) -> Result<Option<f64>> {
        let Some(name) = &self.dead_list else { return Ok(None) };
        match PolicyKind::from_name(name) {
            Ok(PolicyKind::DpApprox { a }) => Ok(Some(a)),
            Ok(_) => Err(Error::invalid("system.dead_list", format!("expected \"dp-approx\" or \"dp-approx:A\" (the OS-implementable predictor), got '{name}'"))),
            Err(e) => Err(rekey(e, "system.dead_list")),
        }
    }
}

/// A policy-name error under the configuration key it came from.
fn rekey(e: Error, key: &str) -> Error {
    match e {
        Error::Invalid { message, .. } => Error::invalid(key, message),
        other => other,
    }
}

/// Free-frame watermarks: kswapd wakes below `low` and reclaims until `high`; `min`
/// is reserved (only direct reclaim goes below it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

impl Watermarks {
    /// Linux 2.2 (mm/page_alloc.c free_area_init): i = frames/128 clamped to [10, 256];
    /// min = i, low = 2i, high = 3i; for memories under 120 frames, i = frames/12.
    pub fn linux22(frames: u64) -> Watermarks {
        let mut i = (frames / 128).clamp(10, 256);
        if 3 * i > frames / 4 {
            // under 120 frames the floor of 10 would hold back most of memory: keep the
            // reserve below a quarter of it (not a Linux rule; Linux never ran this small)
            i = frames / 12;
        }
        Watermarks { min: i, low: 2 * i, high: 3 * i }
    }
}

/// How Linux 2.2 `swap_out` chooses the process whose page table it walks
/// (`reclaim = "linux22"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapOutRule {
    /// Linux 2.2.14 mm/vmscan.c `swap_out`: the process with the largest `swap_cnt`, a
    /// snapshot of its resident set taken when every process's count had run out; it is
    /// walked in virtual-address order from its `swap_address`, and a walk that reaches
    /// the end of its address space without writing a page sets its `swap_cnt` to 0, so
    /// the next process gets its turn.
    #[default]
    SwapCnt,
    /// The engine's rule before issue 15: the process with the largest resident set, for
    /// every page. With `free_pages = "batch"` exactly the old victim selection (a walk
    /// in first-touch order from where the last one stopped).
    LargestRss,
}

/// What frees memory under `reclaim = "linux22"`, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FreePagesRule {
    /// Linux 2.2.14: `__get_free_pages` (mm/page_alloc.c) reclaims in the faulting
    /// process once free frames reach `freepages.min`, and keeps doing so until they are
    /// back at `freepages.high` (`low_on_memory`); `try_to_free_pages` wakes kswapd and
    /// runs `do_try_to_free_pages` (mm/vmscan.c): priorities 6 down to 0, each first
    /// `shrink_mmap` then `swap_out`, until SWAP_CLUSTER_MAX (`reclaim_batch`) succeed;
    /// kswapd wakes every second and at each `try_to_free_pages`, works while free frames
    /// are below `freepages.high`, and sleeps 10 s after a pass that failed.
    Linux22,
    /// The engine's model before issue 15: the faulting process evicts `reclaim_batch`
    /// victims at the min watermark (unless that many writes are in flight); kswapd wakes
    /// below the low watermark and evicts until free frames plus those being written reach
    /// the high one.
    Batch,
}

/// How reclaim picks victims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReclaimKind {
    /// Linux 2.2 `swap_out`: the process with the largest resident set, walked from
    /// where its last walk stopped, second chance by referenced bits.
    #[default]
    Linux22,
    /// A global CLOCK over all frames.
    Clock,
    /// Exact global LRU over all resident pages.
    Lru,
    /// BSD VM page queues (mclustering-pageout.txt section 2): new pages enter the active
    /// list; the page-out daemon scans the inactive list from its least recently used
    /// end, sends referenced pages back to the active list and evicts the others, and
    /// refills the inactive list from the active list's tail.
    Bsd,
    /// One of the replacement policies of replay (`system.policy`), told of every
    /// reference, fault and eviction.
    Policy,
    /// The FreeBSD 8.2 virtual memory system (freebsd.rs): active, inactive and cache
    /// queues with act_count aging, the page daemon of sys/vm/vm_pageout.c with its
    /// targets, laundering with PG_WINATCFLS and vm_pageout_clean clustering, swap-in
    /// read-ahead and vm_fault_prefault; its rules are `[system.freebsd]`.
    Freebsd8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenPolicyKind {
    #[default]
    None,
    /// Token-ordered LRU, token-ordered-lru.txt sections 5.2 and 5.3.
    Paper,
    /// The swap token of Linux 2.6.20 (mm/thrash.c): fault-interval priorities.
    Linux2620,
}

/// When the Linux 2.6.20 swap token protects its holder's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenProtect {
    /// Linux 2.6.20 mm/rmap.c `page_referenced_one`: the holder's pages count as
    /// referenced only while the holder is inside a page fault (`rwsem_is_locked(&mm->
    /// mmap_sem)`), and not when the holder itself is reclaiming (`mm != current->mm`).
    #[default]
    InFault,
    /// The engine's rule before issue 15: the holder is protected all the time.
    Always,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TokenConfig {
    pub policy: TokenPolicyKind,
    /// Section 5.3: the token is taken back after this holding time. None: `hold_share`
    /// of the shortest dedicated run time among the processes (token_defaults.rs).
    pub hold_limit_s: Option<f64>,
    /// The holding-time limit as a share of the shortest dedicated run, when
    /// `hold_limit_s` is not given.
    pub hold_share: f64,
    /// Section 5.3: the token-unsuitable mark expires after this. None: the holding limit.
    pub unsuitable_s: Option<f64>,
    /// Section 5.3: pages the holder may take from itself within the window before it
    /// must return the token and is marked token-unsuitable. None: `abuse_share` of the
    /// single-page faults the swap disk can serve in the window (token_defaults.rs).
    pub self_take_limit: Option<u64>,
    /// The abuse limit as a share of the faults the disk can serve, when
    /// `self_take_limit` is not given.
    pub abuse_share: f64,
    pub self_take_window_s: f64,
    /// The token is requested only when free frames are at or below this many frames
    /// above the high watermark (section 5.2: "only ... due to memory shortage").
    pub shortage_margin: u64,
    /// `policy = "linux2620"`: when the holder's pages are protected.
    pub protect: TokenProtect,
    /// `policy = "linux2620"`: reclaim at priority 0 takes the token away (Linux 2.6.20
    /// mm/vmscan.c `try_to_free_pages` and `balance_pgdat`: `if (!priority)
    /// disable_swap_token()`); only with `system.free_pages = "linux22"`, whose loop has
    /// priorities.
    pub disable_at_priority_zero: bool,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            policy: TokenPolicyKind::None,
            hold_limit_s: None,
            hold_share: 1.0,
            unsuitable_s: None,
            self_take_limit: None,
            abuse_share: 0.25,
            self_take_window_s: 1.0,
            shortage_margin: 0,
            protect: TokenProtect::InFault,
            disable_at_priority_zero: true,
        }
    }
}

/// Load control, the classic alternative (token-ordered-lru.txt section 2.3): suspend
/// the process with the largest resident set while the fault rate stays high.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadControlConfig {
    pub enabled: bool,
    /// Major faults per second of the whole system above which a process is suspended.
    pub high_faults_per_s: f64,
    /// ... and below which a suspended process is resumed.
    pub low_faults_per_s: f64,
    /// How often the rate is measured.
    pub window_s: f64,
}

impl Default for LoadControlConfig {
    fn default() -> Self {
        // An HDD serves about 75 single-page faults a second (13 ms each): above 40 a
        // second the disk is more than half busy with faults, below 10 it is calm.
        LoadControlConfig { enabled: false, high_faults_per_s: 40.0, low_faults_per_s: 10.0, window_s: 1.0 }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessConfig {
    pub name: String,
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub trace: Option<std::path::PathBuf>,
    #[serde(default)]
    pub format: Option<String>,
    /// Seed of the workload; the system's seed when not given.
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub start_ms: f64,
    #[serde(default)]
    pub cpu_ns_per_ref: Option<f64>,
    #[serde(default)]
    pub use_gaps: bool,
    /// Others wait on this process (a BSP peer): it takes precedence for the token.
    #[serde(default)]
    pub priority: bool,
    /// In a gang run over several nodes: references between the barriers of the job's
    /// bulk-synchronous supersteps (none: one barrier, at the end).
    #[serde(default)]
    pub superstep_refs: Option<u64>,
}

fn default_page_size() -> u64 {
    4096
}
fn default_quantum_ms() -> f64 {
    100.0
}
fn default_cpu_ns_per_ref() -> f64 {
    20.0
}
fn default_cpu_ns_per_instruction() -> f64 {
    1.0
}
fn default_minor_fault_ns() -> f64 {
    1000.0
}
fn default_major_fault_cpu_ns() -> f64 {
    10000.0
}
fn default_reclaim_batch() -> u32 {
    32
}
fn default_sample_ms() -> f64 {
    1000.0
}
fn default_space_time_buckets() -> u32 {
    100
}

/// The longest one configured cost or period may last: one simulated day. A larger
/// value is a mistake of units (or an attempt to overflow the clock): the simulated clock
/// counts nanoseconds in 64 bits (292 years), and a run that costs days per reference
/// would need so few references to get there that no result would mean anything.
pub const MAX_DURATION_NS: f64 = 86_400e9;

/// Most processes a configuration may have: each keeps a batch of up to 65,536 records
/// (1.7 MB) and its own time series in memory.
pub const MAX_PROCESSES: usize = 4096;

/// Most space-time buckets per process: every sample stores three 32-bit counts per
/// bucket per process, and a figure has no more rows of pixels than this.
pub const MAX_SPACE_TIME_BUCKETS: u32 = 4096;

/// Most swap slots: slot numbers are 32-bit (with one value for "none") and the engine
/// keeps about 4 bytes per slot (1 GiB at this limit, a swap area of 1 TiB of 4 KiB pages).
pub const MAX_SWAP_SLOTS: u64 = 1 << 28;

/// A number for a one-line message: as written when of ordinary size (`0.001`,
/// `86400000`), else in exponent form (`1e-300`, `1e18`) rather than hundreds of digits.
pub(crate) fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() < 1e-4 || v.abs() >= 1e16) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A duration given in `unit_ns` nanoseconds: finite, >= 0 (or, when `positive`, at
/// least the clock's resolution of 1 ns) and at most [`MAX_DURATION_NS`].
fn duration(what: &str, v: f64, unit: &str, unit_ns: f64, positive: bool) -> Result<()> {
    let max = show(MAX_DURATION_NS / unit_ns);
    let min = show(1.0 / unit_ns);
    if !v.is_finite() || v < 0.0 || (positive && v * unit_ns < 1.0) {
        let lower = if positive { format!("at least {min} {unit} (1 ns, the clock's resolution)") } else { "a number >= 0".to_string() };
        return Err(Error::invalid(what, format!("expected {lower} and at most {max} {unit} (one simulated day), got {}", show(v))));
    }
    if v * unit_ns > MAX_DURATION_NS {
        return Err(Error::invalid(what, format!("expected at most {max} {unit} (one simulated day), got {}", show(v))));
    }
    Ok(())
}

fn non_negative(what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(what, format!("expected a number >= 0, got {v}")))
    }
}

impl ProcessConfig {
    /// The reference source of this process.
    pub fn source(&self, page_size: u64, default_seed: u64, index: usize) -> Result<SourceSpec> {
        let what = format!("processes[{index}]");
        match (&self.workload, &self.trace) {
            (Some(name), None) => {
                let params = self
                    .params
                    .iter()
                    .map(|(k, v)| {
                        let text = match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), text)
                    })
                    .collect();
                Ok(SourceSpec::Workload { name: name.clone(), params, page_size, seed: self.seed.unwrap_or(default_seed) })
            }
            (None, Some(path)) => {
                if !self.params.is_empty() {
                    return Err(Error::invalid(format!("{what}.params"), "only applies to a workload"));
                }
                let format = match &self.format {
                    Some(f) => Some(crate::trace::TraceFormat::from_name(f)?),
                    None => None,
                };
                Ok(SourceSpec::Trace { path: path.clone(), format, page_size: Some(page_size) })
            }
            _ => Err(Error::invalid(what, "expected exactly one of 'workload' or 'trace'")),
        }
    }
}

impl SystemConfig {
    /// Parses the JSON form; errors name the path of the bad key.
    pub fn from_json(text: &str) -> Result<SystemConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: SystemConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            // serde_json appends " at line L column C" of the JSON, meaningless to a TOML user
            let inner = match inner.rfind(" at line ") {
                Some(i) => inner[..i].to_string(),
                None => inner,
            };
            Error::invalid(if path == "." { "config".to_string() } else { path }, inner)
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<()> {
        let s = &self.system;
        if s.frames == 0 || s.frames >= u32::MAX as u64 / 2 {
            return Err(Error::invalid("system.frames", format!("expected 1 to {} frames, got {}", u32::MAX / 2 - 1, s.frames)));
        }
        crate::trace::check_page_size(s.page_size).map_err(|e| Error::invalid("system.page_size", e.to_string()))?;
        duration("system.quantum_ms", s.quantum_ms, "ms", 1e6, true)?;
        duration("system.cpu_ns_per_ref", s.cpu_ns_per_ref, "ns", 1.0, false)?;
        duration("system.cpu_ns_per_instruction", s.cpu_ns_per_instruction, "ns", 1.0, false)?;
        duration("system.minor_fault_ns", s.minor_fault_ns, "ns", 1.0, false)?;
        duration("system.major_fault_cpu_ns", s.major_fault_cpu_ns, "ns", 1.0, false)?;
        duration("system.sample_ms", s.sample_ms, "ms", 1e6, true)?;
        if s.reclaim_batch == 0 {
            return Err(Error::invalid("system.reclaim_batch", "expected at least 1 page"));
        }
        s.reclaim_policy()?;
        s.dead_list_weight()?;
        super::freebsd::validate(self)?;
        if s.space_time_buckets == 0 || s.space_time_buckets > MAX_SPACE_TIME_BUCKETS {
            return Err(Error::invalid(
                "system.space_time_buckets",
                format!("expected 1 to {MAX_SPACE_TIME_BUCKETS} buckets (each sample stores 12 bytes per bucket and process), got {}", s.space_time_buckets),
            ));
        }
        if s.swap_slots > MAX_SWAP_SLOTS {
            return Err(Error::invalid(
                "system.swap_slots",
                format!("expected at most {MAX_SWAP_SLOTS} slots (2^28: slot numbers are 32-bit and each slot costs about 4 bytes of memory), got {}", s.swap_slots),
            ));
        }
        if let Some(w) = s.watermarks {
            if !(w.min <= w.low && w.low <= w.high && w.high < s.frames) {
                return Err(Error::invalid("system.watermarks", format!("expected min <= low <= high < frames ({}), got {}/{}/{}", s.frames, w.min, w.low, w.high)));
            }
        }
        self.disk.validate(s.page_size)?;
        let t = &self.token;
        if let Some(h) = t.hold_limit_s {
            duration("token.hold_limit_s", h, "s", 1e9, true)?;
        }
        if let Some(u) = t.unsuitable_s {
            duration("token.unsuitable_s", u, "s", 1e9, true)?;
        }
        duration("token.self_take_window_s", t.self_take_window_s, "s", 1e9, true)?;
        if !(t.hold_share.is_finite() && t.hold_share > 0.0 && t.hold_share <= 1000.0) {
            return Err(Error::invalid("token.hold_share", format!("expected a share of the shortest dedicated run in (0, 1000], got {}", show(t.hold_share))));
        }
        if !(t.abuse_share.is_finite() && t.abuse_share > 0.0 && t.abuse_share <= 1000.0) {
            return Err(Error::invalid("token.abuse_share", format!("expected a share of the faults the disk can serve in (0, 1000], got {}", show(t.abuse_share))));
        }
        if t.self_take_limit == Some(0) {
            return Err(Error::invalid("token.self_take_limit", "expected at least 1 page"));
        }
        if t.shortage_margin > s.frames {
            return Err(Error::invalid("token.shortage_margin", format!("expected at most system.frames ({}) frames, got {}", s.frames, t.shortage_margin)));
        }
        let l = &self.load_control;
        duration("load_control.window_s", l.window_s, "s", 1e9, true)?;
        non_negative("load_control.high_faults_per_s", l.high_faults_per_s)?;
        non_negative("load_control.low_faults_per_s", l.low_faults_per_s)?;
        if l.low_faults_per_s > l.high_faults_per_s {
            return Err(Error::invalid("load_control", "expected low_faults_per_s <= high_faults_per_s"));
        }
        let w = &self.swap;
        if w.max_cluster == 0 || w.max_cluster > 256 {
            return Err(Error::invalid("swap.max_cluster", format!("expected 1 to 256 pages, got {}", w.max_cluster)));
        }
        if w.cluster_back >= w.max_cluster {
            return Err(Error::invalid("swap.cluster_back", format!("expected fewer pages than max_cluster ({}), got {}", w.max_cluster, w.cluster_back)));
        }
        if w.buffer_pages == 0 || w.buffer_pages > 4096 {
            return Err(Error::invalid("swap.buffer_pages", format!("expected 1 to 4096 pages, got {}", w.buffer_pages)));
        }
        if !w.read_window.is_power_of_two() || w.read_window > 4096 {
            return Err(Error::invalid("swap.read_window", format!("expected a power of two up to 4096 slots, got {}", w.read_window)));
        }
        if let Some(c) = w.page_cluster {
            if c > 12 {
                return Err(Error::invalid("swap.page_cluster", format!("expected 0 to 12, got {c}")));
            }
        }
        self.validate_linux22()?;
        if !(w.fragmentation.is_finite() && (0.0..=0.9).contains(&w.fragmentation)) {
            return Err(Error::invalid("swap.fragmentation", format!("expected a fraction from 0 to 0.9, got {}", w.fragmentation)));
        }
        if let Some(m) = w.async_write_max {
            if m == 0 || m > 1 << 20 {
                return Err(Error::invalid("swap.async_write_max", format!("expected 1 to {} (pages under Linux 2.2's rule, write requests under FreeBSD 8.2's), got {m}", 1 << 20)));
            }
            if w.async_writes == AsyncWritesKind::Unbounded {
                return Err(Error::invalid("swap.async_write_max", "is a bound: it does not combine with async_writes = \"unbounded\""));
            }
        }
        if let Some(g) = &self.gang {
            self.validate_gang(g)?;
        }
        self.check_series_budget()?;
        if self.processes.is_empty() {
            return Err(Error::invalid("processes", "expected at least one process"));
        }
        if self.processes.len() > MAX_PROCESSES {
            return Err(Error::invalid(
                "processes",
                format!("expected at most {MAX_PROCESSES} processes (each keeps a batch of records and its series in memory), got {}", self.processes.len()),
            ));
        }
        for (i, p) in self.processes.iter().enumerate() {
            p.source(s.page_size, s.seed, i)?;
            duration(&format!("processes[{i}].start_ms"), p.start_ms, "ms", 1e6, false)?;
            if let Some(c) = p.cpu_ns_per_ref {
                duration(&format!("processes[{i}].cpu_ns_per_ref"), c, "ns", 1.0, false)?;
            }
            if p.superstep_refs == Some(0) {
                return Err(Error::invalid(format!("processes[{i}].superstep_refs"), "expected at least 1 reference"));
            }
            if self.processes[..i].iter().any(|q| q.name == p.name) {
                return Err(Error::invalid(format!("processes[{i}].name"), format!("'{}' is used twice", p.name)));
            }
        }
        Ok(())
    }

    fn validate_gang(&self, g: &GangConfig) -> Result<()> {
        if g.nodes == 0 || g.nodes > 1024 {
            return Err(Error::invalid("gang.nodes", format!("expected 1 to 1024 nodes, got {}", g.nodes)));
        }
        duration("gang.quantum_s", g.quantum_s, "s", 1e9, true)?;
        if !(g.bg_fraction.is_finite() && g.bg_fraction > 0.0 && g.bg_fraction <= 1.0) {
            return Err(Error::invalid("gang.bg_fraction", format!("expected a fraction in (0, 1], got {}", g.bg_fraction)));
        }
        if g.bg_batch_pages == 0 || g.bg_batch_pages > 4096 {
            return Err(Error::invalid("gang.bg_batch_pages", format!("expected 1 to 4096 pages, got {}", g.bg_batch_pages)));
        }
        if g.ai_block_pages == 0 || g.ai_block_pages > 4096 {
            return Err(Error::invalid("gang.ai_block_pages", format!("expected 1 to 4096 pages, got {}", g.ai_block_pages)));
        }
        duration("gang.barrier_us", g.barrier_us, "us", 1e3, false)?;
        duration("gang.message_us", g.message_us, "us", 1e3, false)?;
        if g.nodes > 1 && g.barrier_delay_ns() == 0 {
            return Err(Error::invalid("gang", "expected barrier_us or message_us > 0 with more than one node (a barrier takes time)"));
        }
        non_negative("gang.locked_mb", g.locked_mb)?;
        non_negative("gang.exchange_mbit_s", g.exchange_mbit_s)?;
        if !(g.shared_ratio.is_finite() && g.shared_ratio >= 1.0) {
            return Err(Error::invalid("gang.shared_ratio", format!("expected a number >= 1 (a shared page's records over the mean), got {}", g.shared_ratio)));
        }
        if !g.node_frames.is_empty() && g.node_frames.len() != g.nodes as usize {
            return Err(Error::invalid("gang.node_frames", format!("expected one number per node ({}), got {}", g.nodes, g.node_frames.len())));
        }
        if !g.node_shares.is_empty() {
            if g.node_shares.len() != g.nodes as usize {
                return Err(Error::invalid("gang.node_shares", format!("expected one share per node ({}), got {}", g.nodes, g.node_shares.len())));
            }
            if let Some(x) = g.node_shares.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                return Err(Error::invalid("gang.node_shares", format!("expected positive shares, got {x}")));
            }
            if g.partition == PartitionKind::Copies {
                return Err(Error::invalid("gang.node_shares", "shares of the data need partition = \"split\" or \"split_neighbours\""));
            }
        }
        for k in 0..g.nodes as usize {
            let frames = g.node_frames(k, self.system.frames);
            let usable = g.usable_frames(frames, self.system.page_size);
            if usable < 16 {
                let key = if g.node_frames.is_empty() { "gang.locked_mb".to_string() } else { format!("gang.node_frames[{k}]") };
                return Err(Error::invalid(key, format!("expected to leave at least 16 of the {frames} frames after the locked memory, leaves {usable}")));
            }
        }
        for (i, m) in g.mechanisms.iter().enumerate() {
            if g.mechanisms[..i].contains(m) {
                return Err(Error::invalid("gang.mechanisms", format!("'{}' is listed twice", format!("{m:?}").to_lowercase())));
            }
        }
        if self.token.policy != TokenPolicyKind::None || self.load_control.enabled {
            return Err(Error::invalid("gang", "a gang run does not combine with [token] or [load_control]"));
        }
        Ok(())
    }

    pub fn watermarks(&self) -> Watermarks {
        self.system.watermarks.unwrap_or_else(|| Watermarks::linux22(self.system.frames))
    }

    /// The Linux 2.2 rules apply: `reclaim = "linux22"`.
    fn is_linux22(&self) -> bool {
        self.system.reclaim == ReclaimKind::Linux22
    }

    /// `system.free_pages` resolved: Linux 2.2.14's `try_to_free_pages` under
    /// `reclaim = "linux22"` outside a gang run (whose adaptive paging mechanisms are built
    /// on the batch model), the batch model otherwise. None: not `reclaim = "linux22"`.
    pub fn free_pages(&self) -> Option<FreePagesRule> {
        if !self.is_linux22() {
            return None;
        }
        Some(self.system.free_pages.unwrap_or(if self.gang.is_some() { FreePagesRule::Batch } else { FreePagesRule::Linux22 }))
    }

    /// `swap.swap_cache` resolved: on when `free_pages` is Linux 2.2's (only its
    /// `shrink_mmap` frees the swap cache) and page-outs are not clustered (2.2 writes
    /// each page alone; clustering is BSD's), unless turned off.
    pub fn swap_cache(&self) -> bool {
        self.free_pages() == Some(FreePagesRule::Linux22) && self.swap.swap_cache.unwrap_or(self.swap.clustering == ClusteringKind::None)
    }

    /// `swap.read_around` resolved: `auto` is Linux 2.2's swap-in read-around under
    /// `reclaim = "linux22"` outside a gang run, BSD's under `reclaim = "freebsd8"`
    /// (`vm_fault`), none otherwise.
    pub fn read_around(&self) -> ReadAroundKind {
        match self.swap.read_around {
            ReadAroundKind::Auto if self.is_linux22() && self.gang.is_none() => ReadAroundKind::Linux,
            // FreeBSD 8.2 vm_fault reads behind and ahead of every swap-in (VM_FAULT_READ_*)
            ReadAroundKind::Auto if self.system.reclaim == ReclaimKind::Freebsd8 => ReadAroundKind::Bsd,
            ReadAroundKind::Auto => ReadAroundKind::None,
            k => k,
        }
    }

    /// `swap.page_cluster` resolved for a node of `frames` frames: as Linux 2.2.14's
    /// `swap_setup` (mm/swap.c) sets it at boot from the memory size: 2 (4 pages) under
    /// 16 MiB, 3 (8 pages) under 32 MiB, else 4 (16 pages).
    pub fn page_cluster(&self, frames: u64) -> u32 {
        self.swap.page_cluster.unwrap_or_else(|| {
            let bytes = frames.saturating_mul(self.system.page_size);
            if bytes < 16 << 20 {
                2
            } else if bytes < 32 << 20 {
                3
            } else {
                4
            }
        })
    }

    /// The Linux 2.2 keys: given only where they apply.
    fn validate_linux22(&self) -> Result<()> {
        if self.system.free_pages.is_some() && !self.is_linux22() {
            return Err(Error::invalid("system.free_pages", "applies only with reclaim = \"linux22\""));
        }
        if self.system.free_pages == Some(FreePagesRule::Linux22) && self.gang.is_some() {
            return Err(Error::invalid(
                "system.free_pages",
                "a gang run takes only \"batch\" (its adaptive paging mechanisms page out through the batch model)",
            ));
        }
        if self.swap.swap_cache == Some(true) && self.free_pages() != Some(FreePagesRule::Linux22) {
            return Err(Error::invalid("swap.swap_cache", "needs reclaim = \"linux22\" and system.free_pages = \"linux22\" (only its shrink_mmap frees the swap cache)"));
        }
        if self.swap.swap_cache == Some(true) && self.swap.clustering != ClusteringKind::None {
            return Err(Error::invalid("swap.swap_cache", "Linux 2.2's swap cache writes each page alone: it does not combine with swap.clustering"));
        }
        if self.free_pages() == Some(FreePagesRule::Linux22) && self.system.dead_list.is_some() {
            return Err(Error::invalid("system.dead_list", "with reclaim = \"linux22\" it needs system.free_pages = \"batch\""));
        }
        Ok(())
    }
}
