//! The capture timeline's core on the real aclGraph fixtures: every fact listed in each case's
//! `expected.json` (tests/fixtures/aclgraph/*/expected.json and the showcase's `aclgraph`
//! section) is checked against what `sources::trace_json` + `analysis::timeline_stats` find.

use crate::common::{fixture, fxray, stdout_json};
use fxray::analysis::timeline_stats::{self, Timeline};
use fxray::sources::trace_json;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CASES: [&str; 6] = [
    "small_single_stream",
    "multistream_moe",
    "large_decoder_32layers",
    "edge_trailing_comma",
    "edge_empty",
    "edge_truncated",
];

fn expected(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("valid expected.json")
}

fn load(path: &Path) -> Timeline {
    Timeline::new(trace_json::load(path).unwrap_or_else(|e| panic!("{e}")))
}

fn as_map(v: &Value) -> BTreeMap<String, f64> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_f64().expect("number")))
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts the facts of one file (`facts` = the `raw`/`aligned`/`filtered` object).
fn check_facts(what: &str, path: &Path, facts: &Value) {
    let tl = load(path);
    let s = tl.summary();
    let ctx = format!("{what} ({})", path.display());
    assert_eq!(
        s.tasks as u64,
        facts["x_events"].as_u64().unwrap(),
        "{ctx}: x_events"
    );
    let tids: Vec<&str> = s.streams.iter().map(|x| x.name.as_str()).collect();
    let want: Vec<&str> = facts["tids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(tids, want, "{ctx}: tids in file order");
    let per: BTreeMap<String, f64> = s
        .streams
        .iter()
        .map(|x| (x.name.clone(), x.tasks as f64))
        .collect();
    assert_eq!(per, as_map(&facts["tasks_per_tid"]), "{ctx}: tasks per tid");
    let hist: BTreeMap<String, f64> = s
        .types
        .iter()
        .map(|(k, v)| (k.clone(), *v as f64))
        .collect();
    assert_eq!(hist, as_map(&facts["task_type_histogram"]), "{ctx}: types");
    let ends = as_map(&facts["max_end_per_tid"]);
    assert_eq!(ends.len(), s.streams.len(), "{ctx}: ends");
    for st in &s.streams {
        let want = ends[&st.name];
        assert!(
            (st.end - want).abs() < 1e-9,
            "{ctx}: end of {} is {}, expected {want}",
            st.name,
            st.end
        );
    }
    let pairs = &facts["record_wait_pairs"];
    let k = &s.pair_kinds;
    assert_eq!(
        s.pairs as u64,
        pairs["total"].as_u64().unwrap(),
        "{ctx}: pairs"
    );
    assert_eq!(
        k.event_record_wait as u64,
        pairs["event_record_wait"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        k.mem_write_wait_value as u64,
        pairs["mem_write_wait_value"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        k.cross_stream as u64,
        pairs["cross_tid"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        k.same_stream as u64,
        pairs["same_tid"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        k.unpaired_handles as u64,
        pairs["unpaired_handles"].as_u64().unwrap(),
        "{ctx}"
    );
    if let Some(flows) = facts.get("flow_events") {
        // Every `s` has its `f`: flows = matched pairs.
        assert_eq!(s.flows as u64, flows["s"].as_u64().unwrap(), "{ctx}: flows");
        assert_eq!(s.flows as u64, flows["f"].as_u64().unwrap(), "{ctx}: flows");
        assert_eq!(s.unmatched_flow_events, 0, "{ctx}");
        assert_eq!(
            s.instants as u64,
            facts["instant_events"].as_u64().unwrap(),
            "{ctx}"
        );
        let by_ph: BTreeMap<String, f64> = s
            .events_by_ph
            .iter()
            .map(|(k, v)| (k.clone(), *v as f64))
            .collect();
        assert_eq!(by_ph, as_map(&facts["events_by_ph"]), "{ctx}: events by ph");
        let distinct: std::collections::HashSet<&str> =
            tl.trace.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            distinct.len() as u64,
            facts["distinct_x_names"].as_u64().unwrap(),
            "{ctx}"
        );
    } else {
        assert_eq!(s.flows, 0, "{ctx}: a raw file has no flow events");
    }
    if let Some(trunc) = facts.get("truncated").and_then(Value::as_bool) {
        assert_eq!(
            s.incomplete.is_some(),
            trunc,
            "{ctx}: incomplete = {:?}",
            s.incomplete
        );
    }
    if let Some(q) = facts.get("trailing_comma_quirk").and_then(Value::as_bool) {
        assert_eq!(
            s.quirks.iter().any(|x| x.contains("trailing comma")),
            q,
            "{ctx}: quirks {:?}",
            s.quirks
        );
    }
    if let Some(sa) = facts.get("stream_active").and_then(Value::as_array) {
        assert_eq!(s.stream_active.len(), sa.len(), "{ctx}: STREAM_ACTIVE");
        for (got, want) in s.stream_active.iter().zip(sa) {
            assert_eq!(got.stream, want["tid"].as_str().unwrap());
            assert_eq!(got.task_id, want["task_id"].as_i64());
            assert_eq!(
                Some(got.active_stream_id),
                want["active_stream_id"].as_i64()
            );
        }
    }
    if let Some(keys) = facts.get("args_keys_seen").and_then(Value::as_array) {
        let mut seen: Vec<&str> = tl
            .trace
            .tasks
            .iter()
            .flat_map(|t| t.args.iter().map(|(k, _)| k.as_str()))
            .collect();
        seen.sort();
        seen.dedup();
        let want: Vec<&str> = keys.iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(seen, want, "{ctx}: args keys");
    }
    if let Some(pid) = facts.get("pid") {
        let got = tl.trace.lanes.first().map(|l| l.pid.as_str());
        assert_eq!(got, pid.as_str(), "{ctx}: pid");
    }
    assert_eq!(
        s.logical_time,
        s.tasks > 0,
        "{ctx}: aclGraph times are logical"
    );
}

fn case_file(dir: &Path, e: &Value, key: &str) -> Option<PathBuf> {
    e["files"][key].as_str().map(|f| dir.join(f))
}

#[test]
fn every_aclgraph_case_matches_its_expected_facts() {
    for case in CASES {
        let dir = fixture("aclgraph").join(case);
        let e = expected(&dir);
        let raw = case_file(&dir, &e, "raw").expect("raw file");
        check_facts(&format!("{case} raw"), &raw, &e["raw"]);
        if let Some(aligned) = case_file(&dir, &e, "aligned") {
            check_facts(&format!("{case} aligned"), &aligned, &e["aligned"]);
        }
        if let Some(filtered) = case_file(&dir, &e, "filtered") {
            check_facts(&format!("{case} filtered"), &filtered, &e["filtered"]);
        }
    }
}

#[test]
fn showcase_capture_matches_its_expected_facts() {
    let root = fixture("showcase");
    let e = expected(&root);
    let a = &e["aclgraph"];
    let raw = root.join(a["raw"].as_str().unwrap());
    let aligned = root.join(a["aligned"].as_str().unwrap());
    check_facts("showcase raw", &raw, &a["raw_facts"]);
    check_facts("showcase aligned", &aligned, &a["aligned_facts"]);
    let tl = load(&aligned);
    assert_eq!(
        tl.trace.flows.len() as u64,
        a["aligned_flow_pairs"].as_u64().unwrap()
    );
    // The drawn arrows are the file's flows; each starts on the record's stream.
    assert_eq!(tl.deps.len(), 4);
    assert!(
        tl.deps
            .iter()
            .all(|d| d.kind == timeline_stats::DepKind::Flow)
    );
}

#[test]
fn truncated_file_loads_what_is_complete_and_says_what_was_not() {
    let dir = fixture("aclgraph/edge_truncated");
    let e = expected(&dir);
    let tl = load(&case_file(&dir, &e, "raw").unwrap());
    let why = tl.trace.incomplete.clone().expect("incomplete");
    assert!(why.contains("line 40"), "{why}");
    assert!(why.contains("38 complete events"), "{why}");
    // The complete prefix is intact: the last complete event is the MEM_WAIT_VALUE on stream206.
    let last = tl.trace.tasks.last().unwrap();
    assert_eq!(last.name, "MEM_WAIT_VALUE_20620230262784");
    assert_eq!(tl.trace.lanes[last.lane as usize].name, "stream206");
}

#[test]
fn raw_pairs_become_arrows_and_stream_active_a_handover() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    let tl = load(&case_file(&dir, &e, "raw").unwrap());
    use timeline_stats::{DepKind, PairKind};
    let count = |k| tl.deps.iter().filter(|d| d.kind == k).count();
    assert_eq!(count(DepKind::Pair(PairKind::Event)), 6);
    assert_eq!(count(DepKind::Pair(PairKind::Mem)), 6);
    assert_eq!(count(DepKind::Handover), 1);
    let h = tl
        .deps
        .iter()
        .find(|d| d.kind == DepKind::Handover)
        .unwrap();
    assert_eq!(tl.trace.lanes[h.from_lane as usize].name, "stream316");
    assert_eq!(tl.trace.lanes[h.to_lane as usize].name, "stream319");
    // Each event pair goes from its record's end to its wait's start.
    for p in &tl.pairing.pairs {
        let r = &tl.trace.tasks[p.record as usize];
        let w = &tl.trace.tasks[p.wait as usize];
        assert!(r.name.ends_with(&p.handle) && w.name.ends_with(&p.handle));
        assert_ne!(r.lane, w.lane);
    }
}

#[test]
fn args_keep_the_writers_order_and_unknown_keys() {
    let text = br#"[
{"name":"k","pid":7,"tid":3,"ts":0,"dur":9.5,"ph":"X","weird":[1,2],"args":{"Model Id":1,"Stream Id":3,"Task Id":0,"Task Type":"KERNEL_AICORE","Numblocks":24,"Schem Mode":0,"Zeta":1,"Alpha":2}}
]"#;
    let t = trace_json::parse(text).unwrap();
    let keys: Vec<&str> = t.tasks[0].args.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "Model Id",
            "Stream Id",
            "Task Id",
            "Task Type",
            "Numblocks",
            "Schem Mode",
            "Zeta",
            "Alpha"
        ]
    );
    assert_eq!(t.tasks[0].extra[0].0, "weird");
    // Numeric pid/tid are read as their text.
    assert_eq!(t.lanes[0].name, "3");
    assert_eq!(t.lanes[0].pid, "7");
}

#[test]
fn other_chrome_traces_open_too() {
    let text = br#"{"displayTimeUnit":"ms","traceEvents":[
 {"name":"a","cat":"gpu","ph":"X","pid":1,"tid":1,"ts":10,"dur":5},
 {"name":"b","cat":"gpu","ph":"X","pid":1,"tid":2,"ts":12,"dur":1},
 {"name":"m","ph":"M","pid":1,"tid":1,"args":{"name":"main"}},
 {"name":"f","ph":"s","id":"0x1","pid":1,"tid":1,"ts":15},
 {"name":"f","ph":"f","id":"0x1","pid":1,"tid":2,"ts":12}
]}"#;
    let t = trace_json::parse(text).unwrap();
    assert_eq!(t.tasks.len(), 2);
    assert_eq!(t.lanes.len(), 2);
    assert_eq!(t.flows.len(), 1);
    assert!(!t.logical_time, "a plain trace has real times");
    assert_eq!(t.types, ["gpu"]);
    assert!(t.incomplete.is_none());
}

#[test]
fn not_a_trace_is_a_one_line_error() {
    for (bytes, want) in [
        (&b""[..], "empty"),
        (b"   \n", "empty"),
        (b"hello", "not a trace"),
        (b"{\"a\":1}", "traceEvents"),
    ] {
        let err = trace_json::parse(bytes).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
        assert!(!err.contains('\n'));
    }
    let dir = tempfile::tempdir().unwrap();
    let err = trace_json::load(&dir.path().join("missing.json")).unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
}

/// Cutting a real file anywhere never panics, never loses a complete event, and is reported.
#[test]
fn any_cut_of_a_real_file_loads_its_complete_prefix() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    for key in ["raw", "aligned"] {
        let bytes = std::fs::read(case_file(&dir, &e, key).unwrap()).unwrap();
        let full = trace_json::parse(&bytes).unwrap().tasks.len();
        let mut last = 0;
        for cut in (1..bytes.len()).step_by(89) {
            let t = trace_json::parse(&bytes[..cut]).unwrap();
            assert!(t.tasks.len() >= last, "{key}: cut {cut} lost events");
            assert!(t.incomplete.is_some(), "{key}: cut {cut} not reported");
            last = t.tasks.len();
        }
        assert!(last <= full && last + 2 >= full, "{key}: {last} of {full}");
    }
    // Invalid UTF-8 in a name is replaced, not fatal.
    let mut bytes = std::fs::read(case_file(&dir, &e, "raw").unwrap()).unwrap();
    let at = bytes.windows(8).position(|w| w == b"GatherV2").unwrap();
    bytes[at] = 0xff;
    let t = trace_json::parse(&bytes).unwrap();
    assert_eq!(t.tasks.len(), 135);
    assert!(t.quirks.iter().any(|q| q.contains("UTF-8")));
}

#[test]
fn range_stats_count_and_time_each_type_and_stream() {
    let dir = fixture("aclgraph/small_single_stream");
    let e = expected(&dir);
    let tl = load(&case_file(&dir, &e, "raw").unwrap());
    // The whole span: the type histogram of expected.json, with the writer's durations
    // (docs/formats.md §2.3: every non-control task is 9.5 long).
    let (lo, hi) = tl.trace.span();
    let all = timeline_stats::range_stats(&tl.trace, lo, hi);
    assert_eq!(all.tasks, 22);
    let aivec = all
        .by_type
        .iter()
        .find(|r| r.name == "KERNEL_AIVEC")
        .unwrap();
    assert_eq!(aivec.count, 16);
    assert_eq!(aivec.total, 16.0 * 9.5);
    assert_eq!((aivec.min, aivec.max, aivec.avg()), (9.5, 9.5, 9.5));
    assert_eq!(all.by_stream.len(), 1);
    assert_eq!(all.by_stream[0].name, "stream58");
    assert_eq!(all.by_stream[0].count, 22);
    // [0, 25]: the tasks at ts 0, 10 and 20.
    let first = timeline_stats::range_stats(&tl.trace, 25.0, 0.0);
    assert_eq!(first.tasks, 3);
}

#[test]
fn search_finds_tasks_by_name() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    let tl = load(&case_file(&dir, &e, "aligned").unwrap());
    let hits = timeline_stats::search(&tl.trace, "moedistributedispatch");
    assert_eq!(hits.len(), 3, "one dispatch per MoE layer");
    assert!(timeline_stats::search(&tl.trace, "  ").is_empty());
}

#[test]
fn cli_json_has_the_issue_fields() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    let raw = case_file(&dir, &e, "raw").unwrap();
    let v = stdout_json(&fxray(&["timeline", raw.to_str().unwrap(), "--json"]));
    assert_eq!(v["tasks"], 135);
    assert_eq!(v["streams"][3]["name"], "stream319");
    assert_eq!(v["streams"][3]["tasks"], 28);
    assert_eq!(v["streams"][3]["end"], 284.5);
    assert_eq!(v["types"]["KERNEL_MIX_AIV"], 15);
    assert_eq!(v["pairs"], 12);
    assert_eq!(v["flows"], 0);
    assert!(v["incomplete"].is_null());

    let trunc = fixture("aclgraph/edge_truncated");
    let e = expected(&trunc);
    let p = case_file(&trunc, &e, "raw").unwrap();
    let v = stdout_json(&fxray(&["timeline", p.to_str().unwrap(), "--json"]));
    assert!(v["incomplete"].as_str().unwrap().contains("cut"));
    let out = fxray(&["timeline", p.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("incomplete: "), "{text}");
    assert!(
        text.contains("stream204       29 tasks  end 299.5"),
        "{text}"
    );
    assert!(text.contains("logical"), "{text}");

    let out = fxray(&["timeline", "/nonexistent/x.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
}

#[test]
fn showcase_kernel_tasks_link_to_final_pass_nodes() {
    use fxray::analysis::task_nodes::{self, Confidence};
    let root = fixture("showcase");
    let e = expected(&root);
    let a = &e["aclgraph"];
    let tl = load(&root.join(a["raw"].as_str().unwrap()));
    let final_pass = crate::common::pass_files("showcase", "forward")
        .pop()
        .unwrap();
    assert!(final_pass.to_string_lossy().contains("018_"));
    let file = fxray::sources::load::graph(&final_pass).unwrap();
    let graph = &file.graphs[0];
    let map = task_nodes::map_tasks(&tl.trace, graph);
    let want = a["kernel_tasks_mapped_to_nodes"].as_u64().unwrap() as usize;
    assert_eq!(map.kernel_tasks, want);
    assert_eq!(map.mapped(), want);
    assert_eq!(map.high, want, "every family has as many tasks as nodes");
    assert!(a["mapped_nodes_all_in_final_graph"].as_bool().unwrap());
    for (node, &task) in &map.by_node {
        assert!(
            graph.by_name.contains_key(node.as_str()),
            "{node} in the final graph"
        );
        assert_eq!(map.by_task[&task], (node.clone(), Confidence::High));
    }
    // Spot checks: the one GatherV2 is the embedding; IndexPutV2 on stream37 are index_put_.
    let target_of = |task: u32| {
        let name = &map.by_task[&task].0;
        graph.nodes[graph.by_name.get(name.as_str()).unwrap()]
            .target
            .clone()
    };
    let gather = tl
        .trace
        .tasks
        .iter()
        .position(|t| t.name.starts_with("GatherV2"))
        .unwrap();
    assert_eq!(
        &*target_of(gather as u32),
        "torch.ops.aten.embedding.default"
    );
    let s37 = tl.trace.lane_by_name("stream37").unwrap();
    for &t in &tl.trace.lanes[s37 as usize].tasks {
        if tl.trace.tasks[t as usize].name.starts_with("IndexPutV2") {
            assert!(target_of(t).contains("index_put_"), "{}", target_of(t));
        }
    }
    // The aligned file (hash-stripped names, merged order) links the same way.
    let aligned = load(&root.join(a["aligned"].as_str().unwrap()));
    assert_eq!(task_nodes::map_tasks(&aligned.trace, graph).high, want);
}

/// Random byte damage (deterministic) never panics the parser or the analysis.
#[test]
fn damaged_files_never_panic() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    let bytes = std::fs::read(case_file(&dir, &e, "aligned").unwrap()).unwrap();
    let whole = trace_json::parse(&bytes).unwrap().tasks.len();
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"{}[],:\"0123456789.-eE \n\\xX";
    let (mut clean, mut reported, mut refused) = (0, 0, 0);
    for round in 0..300 {
        let mut b = bytes.clone();
        let hits = 1 + next() % 8;
        for _ in 0..hits {
            let at = (next() % b.len() as u64) as usize;
            b[at] = alphabet[(next() % alphabet.len() as u64) as usize];
        }
        let t = match trace_json::parse(&b) {
            Ok(t) => t,
            Err(why) => {
                let why = why.to_string();
                // Only a file that no longer opens with `[` is refused, and it says so.
                assert!(
                    why.starts_with("not a trace") || why.starts_with("a JSON object"),
                    "{round}: {why}"
                );
                refused += 1;
                continue;
            }
        };
        // Each damaged byte costs at most the event it hit and the one it ran into.
        assert!(
            t.tasks.len() + 2 * hits as usize >= whole,
            "{round}: {} of {whole} tasks after {hits} damaged bytes",
            t.tasks.len()
        );
        match &t.incomplete {
            None => clean += 1,
            Some(why) => {
                assert!(
                    why.starts_with("skipped ") || why.starts_with("the file "),
                    "{round}: {why}"
                );
                reported += 1;
            }
        }
        let tl = Timeline::new(t);
        let (lo, hi) = tl.trace.span();
        let stats = timeline_stats::range_stats(&tl.trace, lo, hi);
        assert!(
            stats.tasks <= tl.trace.tasks.len(),
            "{round}: range stats count what loaded"
        );
        let _ = tl.summary();
    }
    // Most damage breaks an event and is reported; a byte that lands inside a number or a
    // name loads cleanly. Both must happen, or the test is not exercising the reader.
    eprintln!("damaged traces: {clean} clean, {reported} reported, {refused} refused");
    assert!(reported > 150, "{reported} reported");
    assert!(clean > 0, "{clean} clean");
    assert!(refused <= 3, "{refused} refused");
}

/// One damaged event in the middle is skipped and reported; the rest of the file loads.
#[test]
fn a_damaged_event_is_skipped_and_reported() {
    let dir = fixture("aclgraph/multistream_moe");
    let e = expected(&dir);
    for key in ["raw", "aligned"] {
        let text = std::fs::read_to_string(case_file(&dir, &e, key).unwrap()).unwrap();
        let at = text.find("RmsNorm").unwrap();
        let damaged = format!("{}Rms\"Norm{}", &text[..at], &text[at + 7..]);
        let t = trace_json::parse(damaged.as_bytes()).unwrap();
        assert_eq!(t.tasks.len(), 134, "{key}: all but the damaged event");
        let why = t.incomplete.unwrap();
        assert!(
            why.starts_with("skipped 1 damaged event (first at line "),
            "{key}: {why}"
        );
    }
}
