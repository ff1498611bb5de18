//! `gguf fit` as a command: what it writes and how it exits.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

/// `gguf fit --json … | head -c 10`: the reader closing the pipe is not a failure and not a
/// panic (before the fix: "failed printing to stdout: Broken pipe", exit 101). The output
/// (200 context sizes, 132 kB) is larger than a pipe's buffer, so the write meets the
/// closed pipe whatever the timing.
#[test]
fn a_closed_pipe_is_not_a_failure() {
    let model = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let sizes: Vec<String> = (1..=200).map(|i| (256 * i).to_string()).collect();
    let mut child = Command::new(common::bin())
        .args(["fit", "--json", "--ctx-size", &sizes.join(",")])
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(&first, b"[{\"release");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// `gguf fit MODEL -u 4294967295 -b 4294967295 -c 4294967040 --json` over the tiny model of
/// every architecture: each estimate is either figures that fit in 64 bits or a refusal that
/// names what does not fit. Before the fix, 62 of the 86 printed the compute buffer and the
/// total as 18446744073709551615 (a sum saturated at 2^64 − 1, shown as a figure).
#[test]
fn fit_figures_never_wrap_at_the_largest_parameters() {
    let dir = common::scratch("fit-wrap");
    let _remove = common::RemoveOnDrop(dir.clone());
    let made = common::gguf(&["fixtures", "--all-archs", "."], &dir);
    assert!(made.status.success(), "{made:?}");
    let models = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "gguf"));
    let (mut figures, mut refused) = (0, 0);
    for model in models {
        let largest = [
            "-u",
            "4294967295",
            "-b",
            "4294967295",
            "-c",
            "4294967040",
            "--json",
        ];
        let mut args = vec![std::ffi::OsString::from("fit"), model.clone().into()];
        args.extend(largest.map(Into::into));
        let out = common::gguf(&args, &dir);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stdout.contains(&u64::MAX.to_string()),
            "{}: a saturated figure: {stdout}",
            model.display()
        );
        match out.status.code() {
            Some(0) => figures += 1,
            _ if stderr.contains("does not fit in 64 bits") => refused += 1,
            // Refusals that are not about the sizes (a context llama.cpp cannot make).
            Some(1) if !stderr.contains("panicked") => {}
            code => panic!("{}: exit {code:?}: {stderr}", model.display()),
        }
    }
    assert!(
        refused > 0 && figures > 0,
        "{refused} refused, {figures} with figures"
    );
}

/// Every command that reads a URL states the time limits of the read in its `--help`, with
/// the figures the reader uses.
#[test]
fn url_time_limits_are_stated_in_help() {
    let limits = gguf_tools::source::http::DEADLINES;
    let stated = format!(
        "A URL's read stops after {} s to connect, {} s to the first byte or {} s in all (one \
         retry at most)",
        limits.connect.as_secs(),
        limits.first_byte.as_secs(),
        limits.total.as_secs()
    );
    for command in ["check", "diff", "dump", "fit", "map", "template"] {
        let out = common::gguf_in_root(&[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help.contains(&stated), "gguf {command} --help:\n{help}");
    }
}

/// `--release` picks the llama.cpp modelled, with its defaults: the figures of each release's
/// fit_probe (scripts/llama/fit_probe.cpp) at its defaults on this model, and the release
/// named in the output. 0.3.36: the trained context (128) padded to 256, flash attention
/// auto; 0.3.16: a context of 4096, flash attention off.
#[test]
fn each_release_gives_its_own_figures_at_its_defaults() {
    let model = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let dir = common::scratch("fit-release");
    let _remove = common::RemoveOnDrop(dir.clone());
    for (release, n_ctx, cache, compute) in [
        ("0.3.16", 4096, 262144, 42280960),
        ("0.3.36", 256, 16384, 151040),
    ] {
        let args: [std::ffi::OsString; 5] = [
            "fit".into(),
            model.clone().into(),
            "--json".into(),
            "--release".into(),
            release.into(),
        ];
        let out = common::gguf(&args, &dir);
        assert!(out.status.success(), "{out:?}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let e = &json[0];
        assert_eq!(e["release"], release);
        assert_eq!(e["n_ctx"], n_ctx, "{release}");
        assert_eq!(e["devices"][0]["weights"], 19840, "{release}");
        assert_eq!(e["devices"][0]["cache"], cache, "{release}");
        assert_eq!(e["devices"][0]["output"], 32, "{release}");
        assert_eq!(e["devices"][0]["compute"], compute, "{release}");
    }
    // 0.3.16 has no flash attention auto: a usage error, not a silent choice.
    let args: [std::ffi::OsString; 5] = [
        "fit".into(),
        "--release".into(),
        "0.3.16".into(),
        "--flash-attn=auto".into(),
        model.into(),
    ];
    let out = common::gguf(&args, &dir);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no auto"));
}

/// `--fit-host`: the context llama.cpp 0.3.36's own `--fit` chooses, from SmolLM2's header
/// alone. Recorded from scripts/llama/fit_params.cpp (common_fit_params) on the whole file,
/// with the host simulated through the margin: 300000000 bytes left for the model → success,
/// `-c 4352`; 100000000 → failure, `-c 4096` (the default `--fit-ctx`). Here the host is
/// that plus the default `--fit-target` of 1024 MiB.
#[test]
fn fit_host_chooses_the_context_llama_cpp_chooses() {
    let header = common::root().join("tests/models/SmolLM2-135M-Instruct.Q4_1.header.gguf");
    let dir = common::scratch("fit-host");
    let _remove = common::RemoveOnDrop(dir.clone());
    for (budget, fits, n_ctx) in [(300000000u64, true, 4352), (100000000, false, 4096)] {
        let host = (budget + (1 << 30)).to_string();
        let args: [std::ffi::OsString; 7] = [
            "fit".into(),
            header.clone().into(),
            "--release".into(),
            "0.3.36".into(),
            "--fit-host".into(),
            host.into(),
            "--json".into(),
        ];
        let out = common::gguf(&args, &dir);
        assert!(out.status.success(), "{out:?}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["fits"], fits, "{json}");
        assert_eq!(json["n_ctx"], n_ctx, "{json}");
    }
}
