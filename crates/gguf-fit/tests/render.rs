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
    assert_eq!(first["n_ctx"], 512);
    assert_eq!(first["architecture"], "llama");
    // Per device, total = weights + cache + output + compute.
    for d in first["devices"].as_array().unwrap() {
        let sum: u64 = ["weights", "cache", "output", "compute"]
            .iter()
            .map(|k| d[k].as_u64().unwrap())
            .sum();
        assert_eq!(d["total"].as_u64().unwrap(), sum);
    }
    assert_eq!(first["devices"][1]["device"], "GPU0");
    assert_eq!(first["devices"][1]["weights"], 74240);
    assert_eq!(first["caches"][0]["layers"].as_array().unwrap().len(), 2);
    let text = render::text(&sweep);
    // A header, two devices per context size, the footnote.
    assert_eq!(text.lines().count(), 1 + 4 + 1, "{text}");
    assert!(
        text.lines().nth(1).unwrap().starts_with("512    CPU"),
        "{text}"
    );
}
