//! Text and JSON renderings of estimates, one per context size of a sweep (what `gguf fit`
//! prints).

use std::fmt::Write;

use crate::{Buffer, Device, Estimate, Release};

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / 1048576.0)
}

fn sum_on<'a>(buffers: impl Iterator<Item = &'a Buffer>, device: Device) -> u64 {
    buffers
        .filter(|b| b.device == device)
        .map(|b| b.bytes)
        .sum()
}

/// Per device: weights, caches, output, compute (`None`: not estimated), total (without the
/// compute buffer when it is not estimated).
struct DeviceRow {
    device: Device,
    weights: u64,
    caches: u64,
    output: u64,
    compute: Option<u64>,
    total: u64,
}

fn device_rows(e: &Estimate) -> Vec<DeviceRow> {
    e.devices()
        .into_iter()
        .map(|d| DeviceRow {
            device: d,
            weights: sum_on(e.weights.iter(), d),
            caches: sum_on(e.caches.iter().flat_map(|c| c.buffers.iter()), d),
            output: sum_on(std::iter::once(&e.output), d),
            compute: e.compute.as_ref().ok().map(|c| sum_on(c.iter(), d)),
            total: e.total_on(d),
        })
        .collect()
}

/// A table: one row per context size and device.
pub fn text(estimates: &[Estimate]) -> String {
    let mut out = String::new();
    let header = [
        "n_ctx", "device", "weights", "KV/state", "output", "compute*", "total",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for e in estimates {
        for r in device_rows(e) {
            rows.push(vec![
                e.n_ctx.to_string(),
                r.device.to_string(),
                mib(r.weights),
                mib(r.caches),
                mib(r.output),
                r.compute.map_or("not estimated".into(), mib),
                match r.compute {
                    Some(_) => mib(r.total),
                    None => format!("{} + compute", mib(r.total)),
                },
            ]);
        }
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out.push_str(
        "* the compute buffer is an estimate; the other figures are what llama.cpp allocates\n",
    );
    let mut releases: Vec<Release> = estimates.iter().map(|e| e.release).collect();
    releases.dedup();
    for release in releases {
        let _ = writeln!(out, "  (figures of the {})", release.name());
    }
    let mut reasons: Vec<&str> = estimates
        .iter()
        .filter_map(|e| e.compute.as_ref().err().copied())
        .collect();
    reasons.dedup();
    for reason in reasons {
        let _ = writeln!(out, "  ({reason})");
    }
    out
}

/// A JSON string, escaped as every JSON output escapes (see [`gguf_grammar::escape::json_str`]).
fn json_str(s: &str) -> String {
    format!("\"{}\"", gguf_grammar::escape::json_str(s))
}

fn buffer_json(b: &Buffer) -> String {
    format!(
        "{{\"name\":{},\"device\":{},\"bytes\":{}}}",
        json_str(&b.name),
        json_str(&b.device.to_string()),
        b.bytes
    )
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(","))
}

/// One JSON object per estimate, in an array; sizes in bytes.
pub fn json(estimates: &[Estimate]) -> String {
    list(estimates.iter().map(|e| {
        let devices = list(device_rows(e).into_iter().map(|r| {
            format!(
                "{{\"device\":{},\"weights\":{},\"cache\":{},\"output\":{},\"compute\":{},\"total\":{}}}",
                json_str(&r.device.to_string()),
                r.weights,
                r.caches,
                r.output,
                r.compute.map_or("null".into(), |b| b.to_string()),
                r.total
            )
        }));
        let caches = list(e.caches.iter().map(|c| {
            let layers = list(c.layers.iter().map(|l| {
                format!(
                    "{{\"layer\":{},\"device\":{},\"cells\":{},\"swa\":{},\"k_bytes\":{},\"v_bytes\":{}}}",
                    l.layer,
                    json_str(&l.device.to_string()),
                    l.cells,
                    l.swa,
                    l.k_bytes,
                    l.v_bytes
                )
            }));
            let ty = |t: gguf_grammar::GgmlType| t.ggml_type_name().map_or("null".to_string(), json_str);
            format!(
                "{{\"kind\":{},\"cells\":{},\"n_stream\":{},\"swa\":{},\"type_k\":{},\"type_v\":{},\"k_bytes\":{},\"v_bytes\":{},\"buffers\":{},\"layers\":{}}}",
                json_str(c.kind),
                c.cells,
                c.n_stream,
                c.swa,
                ty(c.type_k),
                ty(c.type_v),
                c.k_bytes(),
                c.v_bytes(),
                list(c.buffers.iter().map(buffer_json)),
                layers
            )
        }));
        format!(
            "{{\"release\":{},\"architecture\":{},\"n_ctx\":{},\"n_batch\":{},\"n_ubatch\":{},\"devices\":{},\"weights\":{},\"caches\":{},\"output\":{},\"compute\":{},\"compute_not_estimated\":{}}}",
            json_str(e.release.version()),
            json_str(&e.hparams.arch),
            e.n_ctx,
            e.n_batch,
            e.n_ubatch,
            devices,
            list(e.weights.iter().map(buffer_json)),
            caches,
            buffer_json(&e.output),
            e.compute
                .as_ref()
                .map_or("null".into(), |c| list(c.iter().map(buffer_json))),
            e.compute.as_ref().err().map_or("null".into(), |why| json_str(why))
        )
    }))
}
