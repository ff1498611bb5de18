//! `gguf_fit::host_fit` against llama.cpp 0.3.36's own `--fit` (common_fit_params) on this
//! host: `scripts/check-fit.sh` builds scripts/llama/fit_params.cpp and runs this test with
//! `FIT_PARAMS` set to it and `GGUF_FIT_MODELS` listing models (absolute paths,
//! colon-separated), after the dense llama models of tests/tiny, which it writes itself. For each model, hosts of several sizes are simulated through the margin
//! (`--fit-target` = the host's total − the size): larger than the model's use at its trained
//! context, between that and the use at `--fit-ctx`, and smaller; the status and the context
//! chosen must be llama.cpp's.

#[allow(dead_code)]
mod tiny;

use std::path::PathBuf;
use std::process::Command;

use gguf_fit::host_fit::fit_host;
use gguf_fit::{Params, Release};
use gguf_grammar::GgufFile;
use serde_json::Value;

fn run(bin: &str, model: &str, margin: u64, ctx_min: u32) -> Value {
    let out = Command::new(bin)
        .arg(model)
        .args([
            "--margin",
            &margin.to_string(),
            "--ctx-min",
            &ctx_min.to_string(),
        ])
        .env("GGML_NO_BACKTRACE", "1")
        .output()
        .expect("run fit_params");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{model}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
#[ignore = "needs FIT_PARAMS (scripts/check-fit.sh)"]
fn matches_llama_cpp_fit() {
    let bin = std::env::var("FIT_PARAMS").expect("FIT_PARAMS: the fit_params binary");
    let dir = std::env::temp_dir().join(format!("gguf-fit-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut models = String::new();
    // The tiny models whose 0.3.36 compute buffer is modelled (dense llama).
    for t in tiny::all()
        .into_iter()
        .filter(|t| t.name.contains("llama") && !t.name.contains("moe"))
    {
        let path = dir.join(t.name);
        std::fs::write(&path, &t.bytes).unwrap();
        models += &format!("{}:", path.display());
    }
    models += &std::env::var("GGUF_FIT_MODELS").unwrap_or_default();
    let params = Params::of(Release::LlamaCppPython0336);
    let (mut cases, mut failures) = (0, Vec::new());
    let mut report = String::from(
        "| model | fit-ctx | host budget | ours | llama.cpp |\n|---|---|---|---|---|\n",
    );
    for model in models.split(':').filter(|m| !m.is_empty()) {
        let file = GgufFile::open(PathBuf::from(model)).unwrap();
        let gguf = file.parse().unwrap_or_else(|e| panic!("{model}: {e}"));
        let shards = [gguf];
        let host_total = run(&bin, model, 0, 4096)["host_total"].as_u64().unwrap();
        for ctx_min in [4096, 256] {
            // The model's use at its trained context and at the minimum, by our estimate: the
            // budgets around and between them.
            let at = |n_ctx| {
                let p = Params {
                    n_ctx,
                    ..params.clone()
                };
                fit_host(&shards, &p, u64::MAX / 2, 0, ctx_min).map(|f| f.used)
            };
            let (full, min) = match (at(0), at(ctx_min)) {
                (Ok(full), Ok(min)) => (full, min),
                (a, b) => {
                    let why = a.and(b).unwrap_err();
                    let name = PathBuf::from(model)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    report += &format!("| {name} | {ctx_min} | - | not estimated: {why} | - |\n");
                    continue;
                }
            };
            let mut budgets = vec![
                full + (1 << 20),
                full,
                (full + min) / 2,
                min + full.saturating_sub(min) / 5,
                min,
                min / 2,
            ];
            budgets.dedup();
            for budget in budgets {
                let margin = host_total - budget;
                let theirs = run(&bin, model, margin, ctx_min);
                let ours = fit_host(&shards, &params, host_total, margin, ctx_min);
                let ours_text = match &ours {
                    Ok(f) => format!("{} -c {}", if f.fits { "fits" } else { "failure" }, f.n_ctx),
                    Err(e) => format!("refused: {e}"),
                };
                let theirs_text = format!(
                    "{} -c {}",
                    theirs["status"]
                        .as_str()
                        .unwrap_or("?")
                        .replace("success", "fits"),
                    theirs["n_ctx"]
                );
                let name = PathBuf::from(model)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                report +=
                    &format!("| {name} | {ctx_min} | {budget} | {ours_text} | {theirs_text} |\n");
                cases += 1;
                if ours_text != theirs_text {
                    failures.push(format!("{name} (fit-ctx {ctx_min}, budget {budget}): ours {ours_text}, llama.cpp {theirs_text}"));
                }
            }
        }
    }
    report += &format!("\n{cases} cases, {} equal\n", cases - failures.len());
    print!("{report}");
    let _ = std::fs::remove_dir_all(&dir);
    // scripts/check-fit.sh --write-results adds it to RESULTS.md.
    if let Some(path) = std::env::var_os("GGUF_FIT_REPORT") {
        std::fs::write(&path, &report).expect("write GGUF_FIT_REPORT");
    }
    assert!(cases > 0, "no model to fit");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
