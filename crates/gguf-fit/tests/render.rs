#[allow(dead_code)]
mod tiny;

use gguf_fit::{estimate, render, Params};
use gguf_grammar::{GgmlType, Gguf};

#[test]
fn json_and_text_carry_the_same_figures() {
    let bytes = tiny::llama_like("llama", 256, 64, 2, 4, 2, 128, GgmlType::F16, false).build();
    let gguf = Gguf::parse(&bytes).unwrap();
    let sweep: Vec<_> = [512, 4096]
        .iter()
        .map(|&n_ctx| {
            estimate(
                &gguf,
                &Params {
                    n_ctx,
                    n_gpu_layers: 1,
                    n_gpu_devices: 1,
                    ..Params::default()
                },
            )
            .unwrap()
        })
        .collect();
    let json: serde_json::Value = serde_json::from_str(&render::json(&sweep)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let first = &json[0];
    // Every field, none claiming an estimate where there is none (a `compute_is_estimate:
    // true` stood beside the null compute).
    let mut keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "architecture",
            "caches",
            "compute",
            "compute_not_estimated",
            "devices",
            "n_batch",
            "n_ctx",
            "n_ubatch",
            "output",
            "release",
            "weights"
        ]
    );
    assert_eq!(first["n_ctx"], 512);
    assert_eq!(first["architecture"], "llama");
    // With a GPU the compute buffers are not estimated: null on every device (not 0, which
    // would read as a measurement), and total = weights + cache + output.
    assert!(first["compute"].is_null(), "{first}");
    assert!(first["compute_not_estimated"]
        .as_str()
        .unwrap()
        .contains("GPU"));
    for d in first["devices"].as_array().unwrap() {
        assert!(d["compute"].is_null(), "{d}");
        let sum: u64 = ["weights", "cache", "output"]
            .iter()
            .map(|k| d[k].as_u64().unwrap())
            .sum();
        assert_eq!(d["total"].as_u64().unwrap(), sum);
    }
    assert_eq!(first["devices"][1]["device"], "GPU0");
    assert_eq!(first["devices"][1]["weights"], 74240);
    assert_eq!(first["caches"][0]["layers"].as_array().unwrap().len(), 2);
    let text = render::text(&sweep);
    // A header, two devices per context size, the footnote, the release and why compute is
    // missing.
    assert_eq!(text.lines().count(), 1 + 4 + 3, "{text}");
    assert!(
        text.contains(&format!(
            "(figures of the {})",
            gguf_fit::Release::NEWEST.name()
        )),
        "{text}"
    );
    assert_eq!(first["release"], gguf_fit::Release::NEWEST.version());
    assert!(
        text.lines().nth(1).unwrap().starts_with("512    CPU"),
        "{text}"
    );
    for row in text.lines().skip(1).take(4) {
        assert!(row.contains("not estimated"), "{text}");
        assert!(row.ends_with("MiB + compute"), "{text}");
    }
    assert!(text.contains("not estimated with GPU devices"), "{text}");
}

/// Without GPUs the compute buffer is estimated (on the CPU) and counted in the total.
#[test]
fn cpu_only_compute_is_a_figure() {
    let bytes = tiny::llama_like("llama", 256, 64, 2, 4, 2, 128, GgmlType::F16, false).build();
    let gguf = Gguf::parse(&bytes).unwrap();
    let e = estimate(&gguf, &Params::default()).unwrap();
    let compute = e.compute.as_ref().unwrap();
    assert_eq!(compute.len(), 1);
    assert!(compute[0].bytes > 0);
    let json: serde_json::Value =
        serde_json::from_str(&render::json(std::slice::from_ref(&e))).unwrap();
    let d = &json[0]["devices"][0];
    let sum: u64 = ["weights", "cache", "output", "compute"]
        .iter()
        .map(|k| d[k].as_u64().unwrap())
        .sum();
    assert_eq!(d["total"].as_u64().unwrap(), sum);
    assert!(json[0]["compute_not_estimated"].is_null());
    let text = render::text(&[e]);
    assert!(!text.contains("not estimated"), "{text}");
    assert_eq!(text.lines().count(), 1 + 1 + 2, "{text}");
}
