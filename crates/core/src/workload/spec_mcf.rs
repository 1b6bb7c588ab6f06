//! The memory access structure of SPEC CPU2000 181.mcf (predictive-replacement.txt,
//! Table 1): the network simplex of a vehicle-scheduling problem, on arrays of node
//! records (64 bytes: number, pred, child, sibling, depth, basic_arc, potential, flow)
//! and arc records (32 bytes: cost, tail, head, ident/flow), in that layout order.
//! Irregular: pricing gathers node potentials at the arcs' endpoints, pivots chase
//! parent pointers through the spanning tree.
//!
//! The network (seeded): arc a leaves node 1 + a (nodes - 1) / arcs (arcs are grouped by
//! tail, as mcf builds them) and enters a uniformly random node; the spanning tree is a
//! random recursive tree under node 0 (mcf's artificial root), numbered in depth-first
//! order, so that every subtree is a run of consecutive nodes; each node's basic arc is a
//! random arc.
//!
//! First read_min writes every node and every arc. Then each iteration:
//! 1. pricing: for every arc in order read the arc, then the potentials of its tail and
//!    its head (reduced cost = cost - tail potential + head potential);
//! 2. `pivots` pivots, each with a seeded entering arc (read it):
//!    - primal_iminus: from its two endpoints step up the tree, the deeper side first,
//!      to where the two paths join: at each node read its record (depth, pred,
//!      basic_arc), then its basic arc's flow;
//!    - the leaving arc is the basic arc of a seeded node w on that cycle;
//!    - primal_update_flow: walk both paths again, reading each node and reading and
//!      writing its basic arc's flow;
//!    - update_tree: rewrite pred, depth and basic_arc of the nodes from the
//!      entering arc's endpoint up to w, then read and write the potential (and depth)
//!      of every node in w's subtree, a run of nodes;
//! 3. refresh_potential: every node in tree order reads its parent's potential and its
//!    basic arc's cost, and writes its own potential.
//!
//! Simplified: mcf's multiple partial pricing (primal_bea_mpp scans groups of arcs at a
//! stride and keeps a basket of candidates) is a full sequential scan, and the entering
//! arcs are drawn at random rather than by reduced cost; the tree keeps its shape (mcf
//! re-hangs the subtree; the addresses of a pivot depend on the tree only through its
//! paths and subtree sizes).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "SPEC mcf access pattern: network simplex (arc pricing with random node gathers, tree-path pointer chasing, subtree updates)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("nodes", "8192", "node records of 64 bytes, at least 2"),
    param("arcs", "131072", "arc records of 32 bytes (about 6 million fill the paper's 190 MB)"),
    param("iterations", "20", "pricing scans over all arcs"),
    param("pivots", "200", "pivots after each pricing scan (0 for pricing only)"),
];

/// Elements (8 bytes) of a node record and of an arc record.
const NODE: u64 = 8;
const ARC: u64 = 4;

/// Element offsets of the fields used.
const PRED: u64 = 1;
const DEPTH: u64 = 4;
const BASIC_ARC: u64 = 5;
const POTENTIAL: u64 = 6;
const COST: u64 = 0;
const FLOW: u64 = 3;

/// Most nodes and arcs: the generator keeps about 36 bytes of each node, 4 of each arc.
const MAX_NODES: u64 = 1 << 24;
const MAX_ARCS: u64 = 1 << 28;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let nodes = p.count("nodes", 2, MAX_NODES)?;
    let arcs = p.count("arcs", 1, MAX_ARCS)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let pivots = p.count("pivots", 0, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let (node, arc) = (layout.array(nodes * NODE)?, layout.array(arcs * ARC)?);
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let net = Network::new(nodes, arcs, &mut rng);
        let m = Mcf { node, arc, net };
        // read_min: the records are written before anything reads them
        for x in 0..nodes * NODE {
            e.write(node.at(x))?;
        }
        for x in 0..arcs * ARC {
            e.write(arc.at(x))?;
        }
        for _ in 0..iterations {
            m.price(e)?;
            for _ in 0..pivots {
                m.pivot(e, &mut rng)?;
            }
            m.refresh_potential(e)?;
        }
        Ok(())
    }))
}

/// The seeded network and spanning tree (indices only).
struct Network {
    head: Vec<u32>,
    /// Per node (depth-first numbering): parent, depth, subtree size, basic arc.
    pred: Vec<u32>,
    depth: Vec<u32>,
    size: Vec<u32>,
    basic_arc: Vec<u32>,
}

impl Network {
    fn new(nodes: u64, arcs: u64, rng: &mut Pcg64) -> Self {
        let n = nodes as usize;
        let head = (0..arcs).map(|_| rng.gen_range(1..nodes) as u32).collect();
        // a random recursive tree (children lists in one array, by parent) ...
        let parent: Vec<u32> = (0..n).map(|v| if v == 0 { 0 } else { rng.gen_range(0..v) as u32 }).collect();
        let mut first = vec![0u32; n + 1];
        for &p in &parent[1..] {
            first[p as usize + 1] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut children = vec![0u32; n.saturating_sub(1)];
        let mut fill = first.clone();
        for (v, &p) in parent.iter().enumerate().skip(1) {
            children[fill[p as usize] as usize] = v as u32;
            fill[p as usize] += 1;
        }
        // ... renumbered in depth-first preorder
        let (mut pred, mut depth, mut size) = (vec![0u32; n], vec![0u32; n], vec![1u32; n]);
        let mut next = 0u32;
        let mut stack = vec![(0u32, 0u32, 0u32)]; // (old id, new parent, depth)
        while let Some((v, parent, d)) = stack.pop() {
            let id = next as usize;
            next += 1;
            (pred[id], depth[id]) = (parent, d);
            let kids = &children[first[v as usize] as usize..first[v as usize + 1] as usize];
            stack.extend(kids.iter().rev().map(|&c| (c, id as u32, d + 1)));
        }
        for id in (1..n).rev() {
            size[pred[id] as usize] += size[id];
        }
        let basic_arc = (0..n).map(|_| rng.gen_range(0..arcs) as u32).collect();
        Network { head, pred, depth, size, basic_arc }
    }

    fn tail(&self, a: u64) -> u64 {
        let nodes = self.pred.len() as u64;
        1 + a * (nodes - 1) / self.head.len() as u64
    }
}

struct Mcf {
    node: Array,
    arc: Array,
    net: Network,
}

impl Mcf {
    fn node_field(&self, v: u64, field: u64) -> u64 {
        self.node.at(v * NODE + field)
    }

    fn arc_field(&self, a: u64, field: u64) -> u64 {
        self.arc.at(a * ARC + field)
    }

    fn read_arc(&self, e: &mut Emitter, a: u64) -> Flow {
        (0..ARC).try_for_each(|f| e.read(self.arc_field(a, f)))
    }

    fn price(&self, e: &mut Emitter) -> Flow {
        for a in 0..self.net.head.len() as u64 {
            self.read_arc(e, a)?;
            e.read(self.node_field(self.net.tail(a), POTENTIAL))?;
            e.read(self.node_field(self.net.head[a as usize] as u64, POTENTIAL))?;
        }
        Ok(())
    }

    /// The tree path from `v` up to (not including) `join`.
    fn path(&self, mut v: u64, join: u64) -> Vec<u64> {
        let mut out = Vec::new();
        while v != join {
            out.push(v);
            v = self.net.pred[v as usize] as u64;
        }
        out
    }

    fn pivot(&self, e: &mut Emitter, rng: &mut Pcg64) -> Flow {
        let net = &self.net;
        let entering = rng.gen_range(0..net.head.len() as u64);
        self.read_arc(e, entering)?;
        let (mut i, mut j) = (self.net.tail(entering), net.head[entering as usize] as u64);
        let (from_tail, from_head) = (i, j);
        // primal_iminus: step the deeper side up until the paths meet
        for v in [i, j] {
            e.read(self.node_field(v, DEPTH))?;
        }
        while i != j {
            let v = if net.depth[i as usize] >= net.depth[j as usize] { &mut i } else { &mut j };
            self.step(e, *v)?;
            *v = net.pred[*v as usize] as u64;
        }
        let (up_tail, up_head) = (self.path(from_tail, i), self.path(from_head, i));
        let cycle = up_tail.len() + up_head.len();
        if cycle == 0 {
            return Ok(()); // a loop arc: nothing to pivot
        }
        // primal_update_flow along both paths
        for &v in up_tail.iter().chain(&up_head) {
            e.read(self.node_field(v, PRED))?;
            let a = net.basic_arc[v as usize] as u64;
            e.read(self.arc_field(a, FLOW))?;
            e.write(self.arc_field(a, FLOW))?;
        }
        // the leaving arc: the basic arc of a node w on the cycle
        let pick = rng.gen_range(0..cycle);
        let (side, at) = if pick < up_tail.len() { (&up_tail, pick) } else { (&up_head, pick - up_tail.len()) };
        let w = side[at];
        // update_tree: re-hang the path from the entering endpoint up to w ...
        for &v in &side[..=at] {
            for field in [PRED, DEPTH, BASIC_ARC] {
                e.write(self.node_field(v, field))?;
            }
        }
        // ... and shift the potentials of w's subtree
        for v in w..w + net.size[w as usize] as u64 {
            e.read(self.node_field(v, POTENTIAL))?;
            e.write(self.node_field(v, POTENTIAL))?;
            e.write(self.node_field(v, DEPTH))?;
        }
        Ok(())
    }

    /// One step of a tree walk at node `v`: its record, then its basic arc's flow.
    fn step(&self, e: &mut Emitter, v: u64) -> Flow {
        for field in [DEPTH, PRED, BASIC_ARC] {
            e.read(self.node_field(v, field))?;
        }
        e.read(self.arc_field(self.net.basic_arc[v as usize] as u64, FLOW))
    }

    fn refresh_potential(&self, e: &mut Emitter) -> Flow {
        let net = &self.net;
        for v in 1..net.pred.len() {
            e.read(self.node_field(v as u64, PRED))?;
            e.read(self.node_field(net.pred[v] as u64, POTENTIAL))?;
            e.read(self.arc_field(net.basic_arc[v] as u64, COST))?;
            e.write(self.node_field(v as u64, POTENTIAL))?;
        }
        Ok(())
    }
}
