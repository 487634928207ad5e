//! Log parsing and `output_code.py` helpers on the real fixtures (tests/fixtures).
//! Every number below was counted on the fixture files with grep/wc/awk.

use fxray::model::log::{Level, LogFormat, LogRef, ParsedLog};
use fxray::sources::debug_log::{detect_format, extract_refs, parse_log};
use fxray::sources::names::capture_file;
use fxray::sources::output_code::{
    OutputCodeIndex, aot_id, fx_graph_name, inductor_kernel_sources, lines_naming,
};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

const SHOWCASE_RUN: &str = "showcase/torch_compile_debug/run_2026_11_29_12_04_56_192145-pid_3064";

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join(rel)
}

fn read(rel: &str) -> String {
    let bytes = std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

fn parse(rel: &str) -> ParsedLog {
    parse_log(&read(rel))
}

/// The only run folder of a case (`run_…-pid_…`).
fn run_dir(case: &str) -> String {
    let dir = fixture(case).join("torch_compile_debug");
    let mut runs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("run_"))
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 1, "{case}: {runs:?}");
    format!("{case}/torch_compile_debug/{}", runs[0])
}

fn record_at(log: &ParsedLog, line: usize) -> &fxray::model::log::LogRecord {
    log.records
        .iter()
        .find(|r| r.line == line)
        .unwrap_or_else(|| panic!("no record starts at line {line}"))
}

/// The `graph_K_id_N_…json` raw capture files of the showcase model.
fn showcase_captures() -> Vec<fxray::sources::names::CaptureName> {
    let dir = fixture(&format!("{SHOWCASE_RUN}/npugraph_ex/model__0"));
    std::fs::read_dir(dir)
        .expect("showcase model dir")
        .filter_map(|e| capture_file(e.ok()?.file_name().to_str()?))
        .filter(|c| c.kind == fxray::model::index::CaptureKind::Raw)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// npugraph_ex / TorchAir debug.log

#[test]
fn showcase_debug_log_records_and_levels() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    assert_eq!(log.format, Some(LogFormat::NpugraphEx));
    // 1979 lines: 1727 start a record (grep '^\[[A-Z]*\] TORCHAIR('), 252 continue one.
    assert_eq!(log.records.len(), 1727);
    assert!(log.preamble.is_empty());
    assert_eq!(
        log.level_counts(),
        vec![(Level::Debug, 1722), (Level::Info, 4), (Level::Event, 1)]
    );
    let lines: usize = log.records.iter().map(|r| r.line_count()).sum();
    assert_eq!(lines, 1979);
}

#[test]
fn showcase_debug_log_first_and_last_record() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    let first = &log.records[0];
    assert_eq!(first.line, 1);
    assert_eq!(first.level, Level::Info);
    assert_eq!(first.time.as_deref(), Some("2026-11-29 12:04:56.894.491"));
    assert_eq!(first.pid, Some(3064));
    assert_eq!(first.thread, Some(3064));
    assert_eq!(first.location.as_deref(), Some("npu_fx_compiler.py:110"));
    assert!(
        first
            .message
            .starts_with("npugraph_ex backend called for model__0: 201 nodes, 36 inputs"),
        "{}",
        first.message
    );
    assert_eq!(first.refs, vec![LogRef::Model("model__0".into())]);

    let last = log.records.last().expect("records");
    assert_eq!(last.line, 1979);
    assert_eq!(last.level, Level::Debug);
    assert_eq!(last.time.as_deref(), Some("2026-11-29 12:05:00.982.135"));
    assert_eq!(last.location.as_deref(), Some("fx2acl_converter.py:385"));
    // The tid is glued to `]`, then one space; the message keeps its own indentation.
    assert_eq!(last.message, "  frozen_parameter: False");
}

#[test]
fn showcase_multi_line_fx_dump() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    let dump = record_at(&log, 73);
    // Lines 73..=325: the header line plus the 252 lines of `graph():` … `return`.
    assert_eq!(dump.line_count(), 253);
    assert_eq!(dump.location.as_deref(), Some("npu_fx_compiler.py:74"));
    assert_eq!(
        dump.first_line(),
        "after fx graph optimization, graph is graph():"
    );
    assert_eq!(
        dump.message.lines().last(),
        Some("    return (_unsafe_view_22,)")
    );
    assert_eq!(record_at(&log, 326).message, "-------------------");
    assert_eq!(log.records.iter().filter(|r| r.line_count() > 1).count(), 1);
}

#[test]
fn showcase_acl_graph_id_joins_the_capture_json() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    let captures = showcase_captures();
    assert_eq!(captures.len(), 1);
    let id = LogRef::AclGraph(captures[0].id.clone());
    assert_eq!(id, LogRef::AclGraph("140715248647824".into()));
    let lines: Vec<usize> = log.referring(&id).map(|r| r.line).collect();
    // "No find captured…" (DEBUG), "Success to capture…" (INFO), "Find captured…" (INFO).
    assert_eq!(lines, vec![1537, 1538, 1540]);
    let capture = record_at(&log, 1538);
    assert_eq!(capture.level, Level::Info);
    assert!(
        capture
            .message
            .starts_with("Success to capture fx_graph graph_1")
    );
    assert_eq!(
        capture.refs,
        vec![
            LogRef::FxGraph("graph_1".into()),
            LogRef::AclGraph("140715248647824".into())
        ]
    );
    // The same graph_K as the JSON name: the capture/replay lines plus the 426 fx_dumper
    // lines whose data-dump path is …/worldsize1_global_rank0/graph_1/<step>.
    let graph = LogRef::FxGraph(captures[0].graph.clone());
    assert_eq!(log.referring(&graph).count(), 429);
    let acl: Vec<&LogRef> = log
        .all_refs()
        .into_iter()
        .filter(|r| matches!(r, LogRef::AclGraph(_)))
        .collect();
    assert_eq!(acl, vec![&id]);
}

#[test]
fn showcase_pass_refs_follow_the_pass_order() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    let expected: serde_json::Value =
        serde_json::from_str(&read("showcase/expected.json")).expect("expected.json");
    let names: Vec<&str> = expected["passes"]["names"]
        .as_array()
        .expect("pass names")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(names.len(), 18);
    let passes: Vec<&str> = log
        .all_refs()
        .into_iter()
        .filter_map(|r| match r {
            LogRef::Pass(p) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(passes, names);
    let r = record_at(&log, 48);
    assert_eq!(
        r.location.as_deref(),
        Some("graph_transform_observer.py:62")
    );
    assert_eq!(r.refs, vec![LogRef::Pass("view_to_reshape".into())]);
}

#[test]
fn showcase_node_model_and_path_refs() {
    let log = parse(&format!("{SHOWCASE_RUN}/npugraph_ex/debug.log"));
    // 250 `[forward] node: X, op: …` lines, 250 distinct names.
    let nodes = log
        .all_refs()
        .into_iter()
        .filter(|r| matches!(r, LogRef::Node(_)))
        .count();
    assert_eq!(nodes, 250);
    assert_eq!(
        record_at(&log, 327).refs,
        vec![LogRef::Node("arg0_1".into())]
    );

    let abs = format!("/home/dev/models/{SHOWCASE_RUN}/npugraph_ex/model__0");
    assert_eq!(
        record_at(&log, 1535).refs,
        vec![LogRef::Model("model__0".into()), LogRef::Path(abs.clone())]
    );
    assert_eq!(
        record_at(&log, 1533).refs,
        vec![
            LogRef::Model("model__0".into()),
            LogRef::Path(format!("{abs}/forward/output_code.py"))
        ]
    );
    // A user source file with its `", line N` tail cut off, and the data-dump folder.
    let dump = record_at(&log, 1541);
    assert!(
        dump.refs.contains(&LogRef::Path(
            "/home/dev/models/showcase/gen/showcase_model.py".into()
        )),
        "{:?}",
        dump.refs
    );
    assert!(dump.refs.contains(&LogRef::Path(
        "/home/dev/models/showcase/data_dump/worldsize1_global_rank0/graph_1/0".into()
    )));
}

#[test]
fn every_npugraph_ex_debug_log_parses_whole() {
    // (case, records, DEBUG, INFO, EVENT, lines): grep -c per level, wc -l.
    let cases = [
        ("npugraph_ex/mlp_inference", 83, 80, 2, 1, 93),
        ("npugraph_ex/transformer_train", 965, 960, 3, 2, 1153),
        ("npugraph_ex/two_models", 301, 293, 5, 3, 344),
        ("npugraph_ex/dynamic_shapes", 434, 430, 3, 1, 510),
        ("npugraph_ex/torch_cond", 108, 105, 2, 1, 125),
        ("npugraph_ex/stress_24layer", 418, 413, 3, 2, 9004),
        ("data_dump/attention_bf16_nan_inf", 544, 540, 3, 1, 622),
    ];
    for (case, records, debug, info, event, lines) in cases {
        let log = parse(&format!("{}/npugraph_ex/debug.log", run_dir(case)));
        assert_eq!(log.format, Some(LogFormat::NpugraphEx), "{case}");
        assert_eq!(log.records.len(), records, "{case}");
        assert_eq!(log.count(Level::Debug), debug, "{case}");
        assert_eq!(log.count(Level::Info), info, "{case}");
        assert_eq!(log.count(Level::Event), event, "{case}");
        let total: usize = log.records.iter().map(|r| r.line_count()).sum();
        assert_eq!(total, lines, "{case}");
    }
}

#[test]
fn two_models_and_stress_logs() {
    let log = parse(&format!(
        "{}/npugraph_ex/debug.log",
        run_dir("npugraph_ex/two_models")
    ));
    let models: Vec<&LogRef> = log
        .all_refs()
        .into_iter()
        .filter(|r| matches!(r, LogRef::Model(_)))
        .collect();
    assert_eq!(
        models,
        vec![
            &LogRef::Model("model__0".into()),
            &LogRef::Model("model__1".into())
        ]
    );
    // The backward graph dump of the 24-layer model: header + 5685 lines.
    let stress = parse(&format!(
        "{}/npugraph_ex/debug.log",
        run_dir("npugraph_ex/stress_24layer")
    ));
    let big = record_at(&stress, 3315);
    assert_eq!(big.line_count(), 5686);
    assert!(big.message.ends_with(')'));
}

#[test]
fn multi_rank_logs_carry_their_pid() {
    for (suffix, pid) in [("pid_1296-rank_0", 1296), ("pid_1297-rank_1", 1297)] {
        let dir = fixture("npugraph_ex/multi_rank/torch_compile_debug");
        let run = std::fs::read_dir(&dir)
            .expect("multi_rank")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find(|n| n.ends_with(suffix))
            .expect("run dir");
        let log = parse(&format!(
            "npugraph_ex/multi_rank/torch_compile_debug/{run}/npugraph_ex/debug.log"
        ));
        assert_eq!(log.records.len(), 121);
        assert!(log.records.iter().all(|r| r.pid == Some(pid)));
    }
}

// ---------------------------------------------------------------------------------------------
// Inductor, Dynamo, glog

#[test]
fn inductor_aot_logs_of_the_fixtures_are_empty() {
    // torch wrote the files but logged nothing into them (0 bytes each).
    for case in [
        "a_mlp_inference",
        "b_transformer_infer",
        "c_transformer_train",
        "e_dynamic_shapes",
        "f_torch_cond",
    ] {
        let rel = format!(
            "{}/torchinductor/aot_model___0_debug.log",
            run_dir(&format!("inductor/{case}"))
        );
        let log = parse(&rel);
        assert_eq!(log.format, None, "{rel}");
        assert!(log.records.is_empty() && log.preamble.is_empty());
    }
}

#[test]
fn inductor_aot_log_format() {
    let text = "[compile_fx.py:812 INFO] Step 3: torchinductor compiling FORWARDS graph 0\n\
                [graph.py:1200 DEBUG] lowering %add_1 : [num_users=1] = call_function[...]\n\
                \x20 continued\n\
                [scheduler.py:2000 WARNING] fusion failed for model__0 in /tmp/torchinductor_u/ab/x.py\n";
    let log = parse_log(text);
    assert_eq!(log.format, Some(LogFormat::Inductor));
    assert_eq!(log.records.len(), 3);
    let r = &log.records[1];
    assert_eq!((r.line, r.level), (2, Level::Debug));
    assert_eq!(r.location.as_deref(), Some("graph.py:1200"));
    assert_eq!(r.line_count(), 2);
    assert_eq!(
        log.records[2].refs,
        vec![
            LogRef::Model("model__0".into()),
            LogRef::Path("/tmp/torchinductor_u/ab/x.py".into())
        ]
    );
}

#[test]
fn showcase_dynamo_log_is_plain_with_indented_continuations() {
    let log = parse(&format!("{SHOWCASE_RUN}/torchdynamo/debug.log"));
    assert_eq!(log.format, Some(LogFormat::Plain));
    // grep -c '^[^[:space:]]': 1938 unindented lines, one record each.
    assert_eq!(log.records.len(), 1938);
    assert!(log.records.iter().all(|r| r.level == Level::None));
    let first = &log.records[0];
    assert_eq!(
        first.message,
        "Step 1: torchdynamo start tracing forward /home/dev/models/showcase/gen/showcase_model.py:195"
    );
    assert_eq!(
        first.refs,
        vec![LogRef::Path(
            "/home/dev/models/showcase/gen/showcase_model.py".into()
        )]
    );
    // `TRACE starts_line …` carries the source line, indented, on the next line.
    let trace = &log.records[1];
    assert_eq!(trace.line, 2);
    assert_eq!(trace.line_count(), 2);
    assert_eq!(
        trace.message.lines().nth(1),
        Some("        def forward(self, input_ids, attention_mask, slot_mapping):")
    );
    // TRACED GRAPH: lines 2536..=2920, the two blank lines before "Step 2" dropped.
    let graph = record_at(&log, 2536);
    assert_eq!(graph.line_count(), 385);
    assert!(
        graph
            .message
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with(" ===== __compiled_fn_1_ac1f1879"))
    );
    let last = log.records.last().expect("records");
    assert_eq!(
        (last.line, last.message.as_str()),
        (2924, "Step 2: done compiler function npugraph_ex")
    );
}

#[test]
fn every_dynamo_log() {
    // (case, records = grep -c '^[^[:space:]]'). stress_24layer's is empty.
    let cases = [
        ("npugraph_ex/mlp_inference", 52),
        ("npugraph_ex/transformer_train", 380),
        ("npugraph_ex/two_models", 106),
        ("npugraph_ex/dynamic_shapes", 717),
        ("npugraph_ex/torch_cond", 657),
        ("npugraph_ex/stress_24layer", 0),
    ];
    for (case, records) in cases {
        let log = parse(&format!("{}/torchdynamo/debug.log", run_dir(case)));
        assert_eq!(log.records.len(), records, "{case}");
        let expected = if records == 0 {
            None
        } else {
            Some(LogFormat::Plain)
        };
        assert_eq!(log.format, expected, "{case}");
    }
}

#[test]
fn glog_console_merges_repeated_prefixes() {
    let log = parse("npugraph_ex/mlp_inference/console.log");
    assert_eq!(log.format, Some(LogFormat::Glog));
    assert_eq!(log.records.len(), 182);
    assert_eq!(
        log.level_counts(),
        vec![
            (Level::Debug, 150),
            (Level::Info, 29),
            (Level::Event, 1),
            (Level::None, 2)
        ]
    );
    let first = &log.records[0];
    assert_eq!(first.time.as_deref(), Some("1129 11:47:00.006000"));
    assert_eq!(first.pid, Some(32090));
    assert_eq!(
        first.location.as_deref(),
        Some("torch/_dynamo/convert_frame.py:2592")
    );
    assert_eq!(first.thread, None);
    assert!(first.message.starts_with("skipping: _wrapped_call_impl"));
    // Lines 4..=19 repeat one prefix: the stack of "torchdynamo start compiling"; the last,
    // empty one is dropped.
    let stack = record_at(&log, 4);
    assert_eq!(stack.line_count(), 15);
    assert!(stack.message.starts_with(
        "[0/0] torchdynamo start compiling forward /home/dev/models/gen/models.py:41"
    ));
    assert_eq!(
        stack.message.lines().nth(1),
        Some("  File \"/home/dev/models/gen/npugraph_ex_cases.py\", line 201, in <module>")
    );
    assert_eq!(record_at(&log, 20).level, Level::Info);
    // npugraph_ex's own lines printed to the same stderr.
    let event = log
        .records
        .iter()
        .find(|r| r.level == Level::Event)
        .expect("EVENT");
    assert_eq!(event.line, 134);
    assert_eq!(event.time.as_deref(), Some("2026-11-29 11:47:00.828.279"));
    // The Python warning on lines 1-2 of the other consoles becomes a level-less record.
    let stress = parse("inductor/c_transformer_train/console.log");
    assert_eq!(stress.records[0].level, Level::None);
    assert_eq!(stress.records[0].line_count(), 2);
    assert_eq!(stress.count(Level::Warning), 2);
    assert_eq!(stress.records[1].refs[0], LogRef::Model("model__0".into()));
}

#[test]
fn glog_rank_prefix() {
    let log = parse("npugraph_ex/multi_rank/console.log");
    assert_eq!(log.records.len(), 1419);
    let first = &log.records[0];
    assert_eq!((first.rank, first.pid), (Some(1), Some(1297)));
    // Both ranks write to one stderr; 34 glog lines (torch's own, before the process group
    // exists) have no rank, 6 are npugraph_ex lines, 3 are print/warning lines.
    let rank = |n| log.records.iter().filter(|r| r.rank == Some(n)).count();
    assert_eq!((rank(0), rank(1)), (688, 688));
    let glog_without_rank = log
        .records
        .iter()
        .filter(|r| r.rank.is_none() && r.thread.is_none() && r.level != Level::None)
        .count();
    assert_eq!(glog_without_rank, 34);
}

#[test]
fn tlparse_payloads_stay_with_their_line() {
    let log = parse("showcase/torch_compile_debug/tlparse/dedicated_log_torch_trace_c0kz2a56.log");
    assert_eq!(log.format, Some(LogFormat::Glog));
    assert_eq!(log.records.len(), 142);
    assert_eq!(log.count(Level::Debug), 142);
    // A header line and its 11 tab-indented JSON lines.
    assert_eq!(log.records[0].line_count(), 12);
    assert_eq!(log.records[1].line, 13);
    // Same prefix, unindented: separate structured-log calls.
    assert!(
        log.records
            .iter()
            .any(|r| r.message.starts_with("{\"str\":"))
    );
}

// ---------------------------------------------------------------------------------------------
// Hostile input

#[test]
fn empty_and_blank() {
    for text in ["", "\n", "  \n\t\n\r\n"] {
        let log = parse_log(text);
        assert_eq!(log.format, None);
        assert!(log.records.is_empty());
        assert_eq!(detect_format(text), None);
    }
}

#[test]
fn garbage_and_binary() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let text = String::from_utf8_lossy(&bytes);
    let log = parse_log(&text);
    assert!(!log.records.is_empty());
    let lines: usize =
        log.records.iter().map(|r| r.line_count()).sum::<usize>() + log.preamble.len();
    assert!(lines <= text.lines().count());

    // Truncated headers of every kind: records or continuations, never a panic.
    for text in [
        "[",
        "[INFO]",
        "[INFO] TORCHAIR(",
        "[INFO] TORCHAIR(1,",
        "[INFO] NPUGRAPH_EX(1,python):2026",
        "[INFO] TORCHAIR(1,py):2026-01-01 00:00:00.000.000 [",
        "[INFO] TORCHAIR(1,py):2026-01-01 00:00:00.000.000 [a.py:1]",
        "V1129",
        "V1129 11:",
        "V1129 11:00:00.000000 12 a.py:1",
        "[rank",
        "[rank1]:",
        "[rank1]:V1129 11:00:00.000000 12 a.py:1] [0/",
        "[a.py:1 INFO]",
        "[é:1 INFO] é",
        "AclGraph{id:",
        "fx_graph graph_",
        "/",
        "model__",
        "node: , op:",
        "pass [",
    ] {
        let log = parse_log(text);
        assert!(log.records.len() <= 1, "{text:?}");
        let _ = extract_refs(text);
    }
}

#[test]
fn pseudo_random_fragments() {
    const FRAGMENTS: [&str; 16] = [
        "[INFO] TORCHAIR(",
        "3064,python):",
        "2026-11-29 12:04:56.894.491 [",
        "a.py:1]",
        "3064 ",
        "\n",
        "  ",
        "V1129 11:47:00.011000 7 t/c.py:2]",
        " [0/0]",
        "[rank1]:",
        "AclGraph{id: 12}",
        "/home/x/model__0/graph_1_id_5_rank_0_pid_1_ts_2.json",
        "é",
        "fx_graph graph_",
        "[x.py:3 ERROR]",
        "\t",
    ];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut text = String::new();
    for _ in 0..200_000 {
        // xorshift: deterministic, no extra crate.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(FRAGMENTS[(state % FRAGMENTS.len() as u64) as usize]);
    }
    let log = parse_log(&text);
    assert!(log.records.windows(2).all(|w| w[0].line < w[1].line));
    assert!(log.records.iter().all(|r| r.refs.len() <= 256));
}

#[test]
fn one_ten_megabyte_line() {
    let header = "[INFO] TORCHAIR(1,python):2026-01-01 00:00:00.000.000 [a.py:1]1 ";
    let mut text = String::from(header);
    let filler = "x AclGraph{id: 7} /p/q model__3 ";
    while text.len() < 10_000_000 {
        text.push_str(filler);
    }
    // Speed is not asserted here (a loaded CI machine made a time bound flaky); the parse is
    // linear, and a quadratic one would not finish a 10 MB line within the test's patience.
    let log = parse_log(&text);
    assert_eq!(log.records.len(), 1);
    assert_eq!(log.records[0].message.len(), text.len() - header.len());
    assert_eq!(
        log.records[0].refs,
        vec![
            LogRef::AclGraph("7".into()),
            LogRef::Path("/p/q".into()),
            LogRef::Model("model__3".into())
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// output_code.py

#[test]
fn showcase_fx_graph_name_joins_the_capture_json() {
    let code = read(&format!(
        "{SHOWCASE_RUN}/npugraph_ex/model__0/forward/output_code.py"
    ));
    let name = fx_graph_name(&code).expect("fx_graph_name");
    assert_eq!(name, "graph_1");
    let captures = showcase_captures();
    assert!(captures.iter().all(|c| c.graph == name));
    // The CPU stand-in code of the other npugraph_ex fixtures has no AclGraphCacheInfo.
    let other = read(&format!(
        "{}/npugraph_ex/model__0/forward/output_code.py",
        run_dir("npugraph_ex/mlp_inference")
    ));
    assert_eq!(fx_graph_name(&other), None);
    assert_eq!(aot_id(&other).as_deref(), Some("model__0_forward"));
}

#[test]
fn showcase_lines_naming_whole_identifiers() {
    let code = read(&format!(
        "{SHOWCASE_RUN}/npugraph_ex/model__0/forward/output_code.py"
    ));
    // grep -nw, and plain grep -c for the substring.
    assert_eq!(lines_naming(&code, "mul_1"), vec![30, 32]);
    assert_eq!(lines_naming(&code, "mul_10"), vec![133, 134]);
    assert_eq!(lines_naming(&code, "_to_copy_1"), vec![29, 30]);
    assert_eq!(lines_naming(&code, "view"), vec![32, 33, 38, 43]);
    assert_eq!(lines_naming(&code, "arg1_1"), vec![20, 22, 262, 323, 358]);
    // "add_1" is a substring on 15 lines (add_10 … add_19) but never a whole name;
    // "to_copy_1" only occurs inside "_to_copy_1".
    assert_eq!(code.lines().filter(|l| l.contains("add_1")).count(), 15);
    assert!(lines_naming(&code, "add_1").is_empty());
    assert!(lines_naming(&code, "to_copy_1").is_empty());
    assert!(lines_naming(&code, "").is_empty());

    let index = OutputCodeIndex::new(&code);
    assert_eq!(index.line_count(), 362, "as `wc -l` counts");
    assert_eq!(index.lines_naming("mul_10"), vec![133, 134]);
    assert_eq!(index.definition("mul_10"), Some(133));
    assert_eq!(
        index.line(133).map(str::trim_start),
        Some(
            "mul_10 = torch.ops.aten.mul.Tensor(_to_copy_8, rsqrt_2);  _to_copy_8 = rsqrt_2 = None"
        )
    );
    // The index answers exactly like the one-pass scan, for every identifier of the file.
    let mut checked = 0;
    for word in code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
    {
        assert_eq!(
            index.lines_naming(word),
            lines_naming(&code, word),
            "{word}"
        );
        checked += 1;
    }
    assert!(checked > 2500, "{checked}");
    // Names that are not identifiers fall back to the scan.
    assert_eq!(
        index.lines_naming("aten.mul.Tensor"),
        lines_naming(&code, "aten.mul.Tensor")
    );
}

#[test]
fn inductor_kernel_source_comments() {
    let code = read(&format!(
        "{}/torchinductor/model__0_inference_0.0/output_code.py",
        run_dir("inductor/b_transformer_infer")
    ));
    assert_eq!(aot_id(&code).as_deref(), Some("0_inference"));
    let kernels = inductor_kernel_sources(&code);
    let summary: Vec<(&str, usize, usize)> = kernels
        .iter()
        .map(|(k, nodes, line)| (k.as_str(), nodes.len(), *line))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("extern_kernels.addmm", 2, 607),
            ("extern_kernels.bmm", 8, 617),
            ("extern_kernels.bmm", 6, 631),
            ("extern_kernels.addmm", 5, 640),
            ("extern_kernels.addmm", 4, 658),
            ("extern_kernels.addmm", 3, 669),
        ]
    );
    assert_eq!(kernels[0].1, vec!["layer_norm", "linear"]);
    assert_eq!(
        kernels[1].1,
        vec![
            "linear",
            "split",
            "view",
            "q_1",
            "matmul",
            "view_1",
            "k_1",
            "transpose_3"
        ]
    );

    let backward = read(&format!(
        "{}/torchinductor/model__0_backward_3.1/output_code.py",
        run_dir("inductor/c_transformer_train")
    ));
    let kernels = inductor_kernel_sources(&backward);
    assert_eq!(kernels.len(), 12);
    assert_eq!(
        (kernels[0].0.as_str(), kernels[0].2),
        ("extern_kernels.mm", 597)
    );
    assert_eq!(kernels[0].1, vec!["view_18", "linear_3", "permute_9", "mm"]);
    assert!(
        kernels
            .iter()
            .all(|(k, _, _)| k.starts_with("extern_kernels."))
    );
}
