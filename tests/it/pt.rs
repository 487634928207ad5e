//! `.pt` files (`torch.save`) read as data: every dtype and layout against torch's own values
//! (tests/data/pt/expected.json, written by tests/data/pt/gen.py), files that hold no tensor,
//! a hostile pickle, and every cut and flipped byte of a real file.

use fxray::analysis::tensor_stats;
use fxray::sources::{pt, tensor_file};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pt")
        .join(name)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(data("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn value(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("odd value {other}"),
        },
        v => v.as_f64().unwrap(),
    }
}

/// torch's `float16` → `<f2`: the dtype names the two write.
fn short(torch: &str) -> &'static str {
    match torch {
        "torch.float32" => "f32",
        "torch.float64" => "f64",
        "torch.float16" => "f16",
        "torch.bfloat16" => "bf16",
        "torch.int64" => "i64",
        "torch.int32" => "i32",
        "torch.int16" => "i16",
        "torch.int8" => "i8",
        "torch.uint8" => "u8",
        "torch.bool" => "bool",
        other => panic!("dtype {other} not in the fixtures"),
    }
}

#[test]
fn every_dtype_and_view_reads_torchs_values_in_c_order() {
    let want = expected();
    let tensors = want["tensors"].as_object().unwrap();
    assert!(tensors.len() >= 18, "the generator writes 18 tensors");
    let mut strided = 0;
    for (name, w) in tensors {
        let arr = pt::open(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let shape: Vec<u64> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(arr.info.shape, shape, "{name}");
        let d = arr.info.describe();
        assert!(
            d.starts_with(short(w["dtype"].as_str().unwrap())),
            "{name}: {d} vs {}",
            w["dtype"]
        );
        let values = w["values"].as_array().unwrap();
        assert_eq!(arr.available, values.len() as u64, "{name}");
        for (i, v) in values.iter().enumerate() {
            let (got, want) = (arr.get_c(i as u64).unwrap(), value(v));
            // serde_json reads the expected decimals to within one unit in the last place.
            let near = got == want || (got - want).abs() <= 4.0 * f64::EPSILON * want.abs();
            assert!(
                near || (got.is_nan() && want.is_nan()),
                "{name}[{i}]: {got} vs torch's {want}"
            );
        }
        if w["contiguous"] == false {
            strided += 1;
        }
    }
    assert!(
        strided >= 5,
        "transposed, offset, expanded, column, permuted"
    );
}

#[test]
fn statistics_of_a_pt_equal_those_of_its_values() {
    // f32.pt holds [[1.5, -2.25, nan], [inf, -inf, 0]]: counted by hand.
    let s = tensor_stats::summarize(&tensor_file::open(&data("f32.pt")).unwrap());
    assert_eq!((s.stats.count, s.stats.nan), (6, 1));
    assert_eq!((s.stats.pos_inf, s.stats.neg_inf, s.stats.zero), (1, 1, 1));
    assert_eq!((s.stats.min, s.stats.max), (Some(-2.25), Some(1.5)));
    assert_eq!(s.info.describe(), "f32 [2, 3]");
    let b = tensor_stats::summarize(&tensor_file::open(&data("bf16.pt")).unwrap());
    assert_eq!(b.info.describe(), "bf16 [3, 4]");
}

#[test]
fn files_without_a_tensor_are_one_line_errors() {
    let want = expected();
    for (name, words) in want["bad"].as_object().unwrap() {
        let err = match pt::open(&data(name)) {
            Ok(_) => panic!("{name} read as a tensor"),
            Err(e) => e.to_string(),
        };
        let words = words.as_str().unwrap();
        assert!(err.contains(words), "{name}: `{err}` lacks `{words}`");
        assert!(!err.contains('\n'), "{name}: {err}");
    }
}

#[test]
fn the_hostile_pickle_is_refused_by_name_and_nothing_runs() {
    let err = pt::open(&data("hostile.pt")).err().unwrap();
    assert!(
        matches!(err, pt::PtError::Refused(ref n) if n == "posix.system"),
        "{err}"
    );
}

#[test]
fn npy_and_pt_go_through_one_door() {
    assert!(tensor_file::is_pt(Path::new(
        "a/Functional.linear.0.forward.output.0.pt"
    )));
    assert!(!tensor_file::is_pt(Path::new("a/x.npy")));
    let npy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy");
    let some_npy = std::fs::read_dir(&npy)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "npy"))
        .unwrap();
    // The door reads an .npy exactly as NpyArray::open does.
    let a = tensor_file::open(&some_npy).map(|a| a.info).ok();
    let b = fxray::sources::npy::NpyArray::open(&some_npy)
        .map(|a| a.info)
        .ok();
    assert!(a.is_some());
    assert_eq!(a, b);
}

#[test]
fn no_cut_or_flipped_byte_of_a_pt_panics() {
    let bytes = std::fs::read(data("bf16_transposed.pt")).unwrap();
    for n in 0..bytes.len() {
        let _ = pt::from_vec(bytes[..n].to_vec());
    }
    let mut ok = 0;
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        if let Ok(arr) = pt::from_vec(b) {
            let _ = tensor_stats::summarize(&arr);
            ok += 1;
        }
    }
    // Flipping a byte of padding or of the data leaves a readable tensor; of the pickle, not.
    assert!(ok > 0 && ok < bytes.len(), "{ok} of {}", bytes.len());
}

#[test]
fn a_cut_pt_says_cut_short_and_a_hostile_one_does_not() {
    let bytes = std::fs::read(data("bf16_transposed.pt")).unwrap();
    // Every cut past the zip magic loses the directory at the archive's end: the caller can
    // tell "read it again later" from "damaged" without reading text.
    for n in 2..bytes.len() {
        let err = pt::from_vec(bytes[..n].to_vec())
            .err()
            .unwrap_or_else(|| panic!("{n} bytes read as a tensor"));
        assert!(err.is_cut_short(), "{n} bytes: {err}");
        assert!(err.to_string().starts_with("cut short"), "{n} bytes: {err}");
    }
    for name in ["hostile.pt", "dict.pt"] {
        let err = pt::open(&data(name)).err().unwrap();
        assert!(!err.is_cut_short(), "{name}: {err}");
    }
    // A pickle that stops mid-opcode is cut too, and says where.
    let err = pt::pickle::load(b"\x80\x02X\xff\xff\xff\x7fab").unwrap_err();
    assert!(err.is_cut_short(), "{err}");
    assert!(
        matches!(
            err,
            pt::PtError::Pickle {
                at: 2,
                what: pt::pickle::Fault::CutShort
            }
        ),
        "{err}"
    );
}

#[test]
fn hand_written_hostile_pickles_return_errors() {
    // (pickle bytes, what the error says); each wrapped in the archive torch.save writes.
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // a list nested 10,000 deep
        (
            [
                b"\x80\x02".to_vec(),
                b"]".repeat(10_000),
                b"a".repeat(9_999),
                b".".to_vec(),
            ]
            .concat(),
            "nested deeper",
        ),
        // memo copies of a growing list: quadratic if unbounded
        (
            [
                b"\x80\x02]".to_vec(),
                b"K\x01a".repeat(5000),
                b"q\x00h\x00h\x00h\x00".repeat(10_000),
                b".".to_vec(),
            ]
            .concat(),
            "too large",
        ),
        (b"\x80\x02h\x07.".to_vec(), "memo slot 7"),
        (b"\x80\x02a.".to_vec(), "empty stack"),
        (
            b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.".to_vec(),
            "builtins.eval",
        ),
        (b"\x80\x02cos\nsystem\n)\x81.".to_vec(), "os.system"),
        (b"\x80\x02K\x01K\x02.".to_vec(), "left on the stack"),
        (b"\x80\x02\xff.".to_vec(), "opcode 0xff"),
        (b"\x80\x02X\xff\xff\xff\x7fab".to_vec(), "ends early"),
    ];
    for (pkl, words) in cases {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        z.start_file("x/data.pkl", o).unwrap();
        std::io::Write::write_all(&mut z, &pkl).unwrap();
        let bytes = z.finish().unwrap().into_inner();
        let err = pt::from_vec(bytes)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(words), "`{err}` lacks `{words}`");
    }
}
