//! ggml-alloc's graph allocator (ggml/src/ggml-alloc.c: `ggml_gallocr_alloc_graph_impl` over
//! a `ggml_dyn_tallocr`) replayed on a description of the graph llama.cpp reserves, so that
//! the compute buffer includes the fragmentation ggml-alloc really leaves, not only the
//! tensors alive at once.
//!
//! The graphs described are those of `llm_build_llama` (llama-model.cpp) with
//! `build_attn`/`build_attn_mha`/`build_ffn` (llama-graph.cpp) for a dense llama (no
//! experts); the node order is the order `ggml_build_forward_expand` visits them, checked
//! against ggml-alloc's own trace (`AT_PRINTF`) of llama.cpp 0.3.16, and for 0.3.36 against
//! the scheduler's node list (`GGML_SCHED_DEBUG=2`): 0.3.36 computes V before K, keeps an
//! unused `inp_embd` input, builds the mask unpadded (f16 with flash attention, no cast) and
//! rotates Q, K and V for a quantised cache.

use crate::{Cache, Estimate, Params, Release};

/// ggml-cpu's buffer alignment (`TENSOR_ALIGNMENT`).
const ALIGN: u64 = 32;

/// `ggml_dyn_tallocr`: best fit among the free blocks but the last, the last as a last resort.
struct DynAlloc {
    free: Vec<(u64, u64)>, // (offset, size), sorted by offset
    max_size: u64,
    /// A size past what the arithmetic holds (a hostile header): the peak is unknown.
    overflow: bool,
}

impl DynAlloc {
    fn new() -> Self {
        DynAlloc {
            free: vec![(0, u64::MAX / 4)],
            max_size: 0,
            overflow: false,
        }
    }

    fn alloc(&mut self, size: u64) -> u64 {
        let n = self.free.len();
        if self.overflow || size > u64::MAX / 8 || self.free[n - 1].1 < size + ALIGN {
            self.overflow = true;
            return 0;
        }
        let size = size.div_ceil(ALIGN) * ALIGN;
        let mut best: Option<usize> = None;
        let mut best_size = u64::MAX;
        for (i, &(_, s)) in self.free[..n - 1].iter().enumerate() {
            if s >= size && s <= best_size {
                best = Some(i);
                best_size = s;
            }
        }
        let i = best.unwrap_or(n - 1);
        let offset = self.free[i].0;
        self.free[i].0 += size;
        self.free[i].1 -= size;
        if self.free[i].1 == 0 {
            self.free.remove(i);
        }
        self.max_size = self.max_size.max(offset + size);
        offset
    }

    fn free(&mut self, offset: u64, size: u64) {
        if self.overflow {
            return;
        }
        let size = size.div_ceil(ALIGN) * ALIGN;
        for i in 0..self.free.len() {
            let (bo, bs) = self.free[i];
            if bo + bs == offset {
                self.free[i].1 += size;
                if i + 1 < self.free.len() && self.free[i].0 + self.free[i].1 == self.free[i + 1].0
                {
                    self.free[i].1 += self.free[i + 1].1;
                    self.free.remove(i + 1);
                }
                return;
            }
            if offset + size == bo {
                self.free[i].0 = offset;
                self.free[i].1 += size;
                if i > 0 && self.free[i - 1].0 + self.free[i - 1].1 == self.free[i].0 {
                    self.free[i - 1].1 += self.free[i].1;
                    self.free.remove(i);
                }
                return;
            }
        }
        let at = self.free.iter().take_while(|b| b.0 < offset).count();
        self.free.insert(at, (offset, size));
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Weights and the KV cache: memory of their own (`data != NULL`).
    External,
    /// An input leaf (`ggml_set_input`), allocated before the nodes.
    Input,
    /// An op with a result of its own; `inplace` when `ggml_op_can_inplace`.
    Op { inplace: bool },
    /// A view (reshape, permute, view, transpose, set_rows) of its root tensor.
    View(usize),
}

struct Tensor {
    kind: Kind,
    bytes: u64,
    /// Element type and shape: `ggml_are_same_layout` for in-place reuse.
    layout: (u8, [u64; 4]),
    srcs: Vec<usize>,
    output: bool,
}

/// A graph in execution order (ggml's `nodes`), with its leaves.
#[derive(Default)]
pub(crate) struct Graph {
    tensors: Vec<Tensor>,
    nodes: Vec<usize>,
}

const F32: u8 = 0;
const F16: u8 = 1;
const I32: u8 = 26;
const I64: u8 = 27;

fn type_size(ty: u8) -> u64 {
    match ty {
        F16 => 2,
        I64 => 8,
        _ => 4,
    }
}

impl Graph {
    fn push(&mut self, kind: Kind, ty: u8, ne: [u64; 4], srcs: &[usize]) -> usize {
        // An overflowing size saturates, and the allocator then reports no peak.
        let bytes = ne
            .iter()
            .try_fold(type_size(ty), |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        self.tensors.push(Tensor {
            kind,
            bytes,
            layout: (ty, ne),
            srcs: srcs.to_vec(),
            output: false,
        });
        let id = self.tensors.len() - 1;
        if !matches!(kind, Kind::External | Kind::Input) {
            self.nodes.push(id);
        }
        id
    }

    fn external(&mut self) -> usize {
        self.push(Kind::External, F32, [0; 4], &[])
    }

    fn input(&mut self, ty: u8, ne: [u64; 4]) -> usize {
        self.push(Kind::Input, ty, ne, &[])
    }

    fn op(&mut self, ty: u8, ne: [u64; 4], srcs: &[usize]) -> usize {
        self.push(Kind::Op { inplace: false }, ty, ne, srcs)
    }

    fn inplace(&mut self, ty: u8, ne: [u64; 4], srcs: &[usize]) -> usize {
        self.push(Kind::Op { inplace: true }, ty, ne, srcs)
    }

    fn view(&mut self, of: usize) -> usize {
        let root = match self.tensors[of].kind {
            Kind::View(root) => root,
            _ => of,
        };
        self.push(Kind::View(root), F32, [0; 4], &[of])
    }

    /// `ggml_cast`: a CPY node whose second source is itself.
    fn cast(&mut self, of: usize, ty: u8, ne: [u64; 4]) -> usize {
        let id = self.op(ty, ne, &[of]);
        self.tensors[id].srcs.push(id);
        id
    }

    /// The high-water mark of ggml-alloc's dynamic allocator over the graph, or `None` when
    /// a size is too large for the arithmetic (a hostile header).
    pub(crate) fn peak(&self) -> Option<u64> {
        let mut s = State {
            t: &self.tensors,
            allocated: vec![false; self.tensors.len()],
            offset: vec![0; self.tensors.len()],
            children: vec![0; self.tensors.len()],
            views: vec![0; self.tensors.len()],
            a: DynAlloc::new(),
        };
        let t = &self.tensors;
        for (id, tensor) in t.iter().enumerate() {
            if tensor.kind == Kind::Input {
                s.allocate(id);
            }
        }
        for &id in &self.nodes {
            if let Kind::View(root) = t[id].kind {
                s.views[root] += 1;
            }
            for &p in &t[id].srcs {
                s.children[p] += 1;
            }
        }
        for &id in &self.nodes {
            for &p in &t[id].srcs {
                s.allocate(p);
            }
            s.allocate(id);
            for &p in &t[id].srcs {
                s.children[p] -= 1;
                if s.children[p] != 0 || s.views[p] != 0 {
                    continue;
                }
                if let Kind::View(root) = t[p].kind {
                    s.views[root] -= 1;
                    if s.views[root] == 0 && s.children[root] == 0 && s.allocated[root] {
                        s.free(root);
                    }
                } else if s.allocated[p] {
                    s.free(p);
                }
            }
        }
        (!s.a.overflow).then_some(s.a.max_size)
    }
}

/// `ggml_gallocr`'s per-tensor bookkeeping (`hash_node`).
struct State<'g> {
    t: &'g [Tensor],
    allocated: Vec<bool>,
    offset: Vec<u64>,
    children: Vec<u32>,
    views: Vec<u32>,
    a: DynAlloc,
}

impl State<'_> {
    /// `ggml_gallocr_allocate_node`: reuse a parent's memory in place when the op allows it.
    fn allocate(&mut self, id: usize) {
        let t = self.t;
        if self.allocated[id] || matches!(t[id].kind, Kind::External | Kind::View(_)) {
            return;
        }
        self.allocated[id] = true;
        if let Kind::Op { inplace: true } = t[id].kind {
            for &p in &t[id].srcs {
                if !self.allocated[p] || t[p].output || t[p].layout != t[id].layout {
                    continue;
                }
                if self.children[p] == 1 && self.views[p] == 0 {
                    self.offset[id] = self.offset[p];
                    self.allocated[p] = false;
                    return;
                }
            }
        }
        self.offset[id] = self.a.alloc(t[id].bytes);
    }

    /// `ggml_gallocr_free_node`: graph outputs are never freed.
    fn free(&mut self, id: usize) {
        if !self.t[id].output {
            self.a.free(self.offset[id], self.t[id].bytes);
            self.allocated[id] = false;
        }
    }
}

/// Whether [`llama`] describes the model's graph: `llm_build_llama` without experts, one
/// unified (not sliding-window) cache, every layer with attention and a feed-forward.
pub(crate) fn models(e: &Estimate) -> bool {
    let hp = &e.hparams;
    let kv: Vec<&Cache> = e.caches.iter().filter(|c| c.kind == "kv").collect();
    hp.arch == "llama"
        && hp.n_expert == 0
        && hp.n_embd_head_k_mla == 0
        && hp.n_embd_head_k == hp.n_embd_head_v
        && e.caches.len() == 1
        && kv.len() == 1
        && kv[0].layers.len() == hp.n_layer as usize
        && hp.n_head.iter().all(|&h| h > 0)
        && hp.n_head_kv.iter().all(|&h| h > 0)
        && hp.n_ff.iter().all(|&f| f > 0)
}

/// The graph `llm_build_llama` reserves for a ubatch of `n_tokens` tokens in `n_seqs`
/// sequences, every token an output, attention over the whole cache.
pub(crate) fn llama(e: &Estimate, params: &Params, n_tokens: u64) -> Graph {
    let hp = &e.hparams;
    let cache = &e.caches[0];
    let mut g = Graph::default();
    let (embd, t) = (u64::from(hp.n_embd), n_tokens);
    let n_stream = u64::from(cache.n_stream);
    let n_kv = u64::from(cache.cells);
    let head_k = u64::from(hp.n_embd_head_k);
    let head_v = u64::from(hp.n_embd_head_v);
    let n_outputs = n_tokens;
    let newer = params.release >= Release::LlamaCppPython0336;
    // 0.3.16: flash attention only when n_kv is a multiple of 256 (build_attn_mha); 0.3.36
    // always (its caches are multiples of 256).
    let fa = params.flash_attn && (newer || n_kv % 256 == 0);
    let v_trans = !params.flash_attn;
    let cache_f32 = |ty: gguf_grammar::GgmlType| ty == gguf_grammar::GgmlType::F32;

    // Leaves in the order the graph first reaches them.
    let tokens = g.input(I32, [t, 1, 1, 1]);
    if newer {
        // build_inp_embd's input for vector embeddings (`inp_embd`): no node reads it when
        // the batch holds tokens, so it is never freed.
        g.input(F32, [embd, t, 1, 1]);
    }
    let pos = g.input(I32, [t, 1, 1, 1]);
    // 0.3.36 rotates Q, K and V by a Hadamard matrix when the cache type is quantised and the
    // head a multiple of 64 (llama_kv_cache's attn_rot_k/attn_rot_v): K's matrix is the
    // largest power of two from 64 dividing the head, V's 64 (build_input_k_rot/_v_rot).
    let quantised = |ty: gguf_grammar::GgmlType| ty.is_quantized() == Some(true);
    let rot_k = (newer && quantised(params.type_k) && head_k % 64 == 0).then(|| {
        let mut n = 64;
        while head_k % (n * 2) == 0 {
            n *= 2;
        }
        g.input(F32, [n, n, 1, 1])
    });
    let rot_v = (newer && quantised(params.type_v) && head_v % 64 == 0)
        .then(|| g.input(F32, [64, 64, 1, 1]));
    let k_idxs = g.input(I64, [t, 1, 1, 1]);
    let v_rows = if v_trans { hp.n_embd_v_gqa_max() } else { 1 };
    let v_idxs = g.input(I64, [t.saturating_mul(v_rows), 1, 1, 1]);
    // 0.3.16 pads the mask's rows to GGML_KQ_MASK_PAD (64); 0.3.36 does not.
    let per_stream = if newer {
        t / n_stream
    } else {
        (t / n_stream).div_ceil(64) * 64
    };
    // 0.3.36 builds the mask in f16 for flash attention; 0.3.16 casts an f32 mask.
    let mask_type = if newer && fa { F16 } else { F32 };
    let mask = g.input(mask_type, [n_kv, per_stream, 1, n_stream]);
    let out_ids = g.input(I32, [n_outputs, 1, 1, 1]);
    let weight = g.external();
    let cache_t = g.external();

    let mut inp_l = g.op(F32, [embd, t, 1, 1], &[weight, tokens]); // get_rows
    let mut mask_f16 = None;
    let n_layer = hp.n_layer as usize;
    for il in 0..n_layer {
        let n_head = u64::from(hp.n_head[il]);
        let n_head_kv = u64::from(hp.n_head_kv[il]);
        let n_ff = u64::from(hp.n_ff[il]);
        let last = il + 1 == n_layer;
        let x = [embd, t, 1, 1];
        let norm = g.inplace(F32, x, &[inp_l]); // rms_norm
        let attn_norm = g.inplace(F32, x, &[norm, weight]);
        let q = g.op(F32, [head_k * n_head, t, 1, 1], &[weight, attn_norm]);
        let q_r = g.view(q);
        // llama_mul_mat_hadamard: a matmul of the rotation with a reshape of the tensor.
        let rotate = |g: &mut Graph, rot: Option<usize>, of: usize, ne: [u64; 4]| match rot {
            Some(rot) => {
                let flat = g.view(of);
                let r = g.op(F32, ne, &[rot, flat]);
                g.view(r)
            }
            None => of,
        };
        let q_shape = [head_k, n_head, t, 1];
        let q_rope = g.inplace(F32, q_shape, &[q_r, pos]);
        let q_rope = rotate(&mut g, rot_k, q_rope, q_shape);
        // 0.3.36's build_qkv computes V before K.
        let v_shape = [head_v * n_head_kv, t, 1, 1];
        let v_first = newer.then(|| {
            let v = g.op(F32, v_shape, &[weight, attn_norm]);
            rotate(&mut g, rot_v, v, v_shape)
        });
        let k = g.op(F32, [head_k * n_head_kv, t, 1, 1], &[weight, attn_norm]);
        let k_r = g.view(k);
        let k_shape = [head_k, n_head_kv, t, 1];
        let k_rope = g.inplace(F32, k_shape, &[k_r, pos]);
        let k_rope = rotate(&mut g, rot_k, k_rope, k_shape);
        let v = v_first.unwrap_or_else(|| g.op(F32, v_shape, &[weight, attn_norm]));
        let v_r = g.view(v);
        // cpy_k, cpy_v: set_rows into views of the cache
        let k_rr = g.view(k_rope);
        g.push(Kind::View(cache_t), F32, [0; 4], &[k_rr, k_idxs]);
        let mut v_rr = g.view(v_r);
        if v_trans {
            v_rr = g.view(v_rr);
        }
        g.push(Kind::View(cache_t), F32, [0; 4], &[v_rr, v_idxs]);
        let kqv_out = if fa {
            let q4 = g.view(q_rope);
            let qp = g.view(q4);
            let kv_ = g.view(cache_t);
            let mut kp = g.view(kv_);
            let vv = g.view(cache_t);
            let mut vp = g.view(vv);
            if cache_f32(params.type_k) {
                kp = g.cast(kp, F16, [head_k, n_kv, n_head_kv, n_stream]);
            }
            if cache_f32(params.type_v) {
                vp = g.cast(vp, F16, [head_v, n_kv, n_head_kv, n_stream]);
            }
            let m = if newer {
                mask
            } else {
                *mask_f16.get_or_insert_with(|| g.cast(mask, F16, [n_kv, per_stream, 1, n_stream]))
            };
            let out = g.op(F32, [head_v, n_head, t, 1], &[qp, kp, vp, m]);
            g.view(out)
        } else {
            let vv = g.view(cache_t);
            let vp = g.view(vv);
            let kv_ = g.view(cache_t);
            let kp = g.view(kv_);
            let q4 = g.view(q_rope);
            let qp = g.view(q4);
            let kq_shape = [n_kv, t / n_stream, n_head, n_stream];
            let kq = g.op(F32, kq_shape, &[kp, qp]);
            let sm = g.inplace(F32, kq_shape, &[kq, mask]);
            let kqv = g.op(F32, [head_v, t / n_stream, n_head, n_stream], &[vp, sm]);
            let perm = g.view(kqv);
            g.op(F32, [head_v * n_head, t, 1, 1], &[perm]) // cont_2d
        };
        let kqv_out = rotate(&mut g, rot_v, kqv_out, [head_v * n_head, t, 1, 1]);
        let mut cur = g.op(F32, x, &[weight, kqv_out]); // wo
        let mut inp_sa = inp_l;
        let x_out = if last { [embd, n_outputs, 1, 1] } else { x };
        if last {
            cur = g.op(F32, x_out, &[cur, out_ids]);
            inp_sa = g.op(F32, x_out, &[inp_sa, out_ids]);
        }
        let ffn_inp = g.inplace(F32, x_out, &[cur, inp_sa]);
        let norm = g.inplace(F32, x_out, &[ffn_inp]);
        let ffn_norm = g.inplace(F32, x_out, &[norm, weight]);
        let ff = [n_ff, x_out[1], 1, 1];
        let gate = g.op(F32, ff, &[weight, ffn_norm]);
        let up = g.op(F32, ff, &[weight, ffn_norm]);
        let glu = g.op(F32, ff, &[gate, up]); // swiglu_split
        let down = g.op(F32, x_out, &[weight, glu]);
        inp_l = g.inplace(F32, x_out, &[down, ffn_inp]);
    }
    let x = [embd, n_outputs, 1, 1];
    let norm = g.inplace(F32, x, &[inp_l]);
    let result_norm = g.inplace(F32, x, &[norm, weight]);
    let logits = g.op(F32, [hp.n_vocab, n_outputs, 1, 1], &[weight, result_norm]);
    g.tensors[logits].output = true;
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-computed from ggml_dyn_tallocr_alloc / _free_tensor.
    #[test]
    fn best_fit_reuses_holes_and_merges_them() {
        let mut a = DynAlloc::new();
        assert_eq!(a.alloc(100), 0); // padded to 128
        assert_eq!(a.alloc(64), 128);
        assert_eq!(a.alloc(32), 192);
        a.free(0, 100); // hole [0, 128)
        assert_eq!(a.alloc(30), 0); // the hole, not the tail: [32, 128) stays free
        a.free(128, 64); // merges with [32, 128): [32, 192)
        assert_eq!(a.alloc(160), 32); // fits the merged hole exactly
        assert_eq!(a.alloc(1), 224); // the tail
        assert_eq!(a.max_size, 256);
    }

    #[test]
    fn an_inplace_op_reuses_its_only_parent() {
        // x -> rms_norm (in place) -> mul (in place): one block; then a matmul of another size.
        let mut g = Graph::default();
        let w = g.external();
        let x = g.input(F32, [8, 4, 1, 1]); // 128 bytes
        let n = g.inplace(F32, [8, 4, 1, 1], &[x]);
        let m = g.inplace(F32, [8, 4, 1, 1], &[n, w]);
        g.op(F32, [16, 4, 1, 1], &[w, m]); // 256 bytes after the 128
        assert_eq!(g.peak(), Some(128 + 256));
    }
}
