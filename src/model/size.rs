//! Byte sizes as the user reads them, written one way everywhere: powers of 1024 with their
//! IEC names (`KiB`, `MiB`, `GiB`), so a size in the status bar, a log list and an error
//! message agree on what a megabyte is.

const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// `512 B`, `40 KiB`, `1.2 MiB`, `512 MiB`, `10.0 GiB`: one decimal below 10 of a unit.
pub fn human_bytes(bytes: u64) -> String {
    let mut unit = 0;
    let mut v = bytes as f64;
    while unit + 1 < UNITS.len() && rounded(v) >= 1024.0 {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} B"),
        _ if rounded(v) < 10.0 => format!("{v:.1} {}", UNITS[unit]),
        _ => format!("{v:.0} {}", UNITS[unit]),
    }
}

/// `v` as it will be printed: one decimal below 10, whole above.
fn rounded(v: f64) -> f64 {
    if v < 9.95 {
        (v * 10.0).round() / 10.0
    } else {
        v.round()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_iec_units() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (40 * 1024, "40 KiB"),
            (1_258_291, "1.2 MiB"),
            (512 << 20, "512 MiB"),
            // 1023.9997 KiB prints as the next unit, never as "1024 KiB".
            ((1 << 20) - 1, "1.0 MiB"),
            (1 << 30, "1.0 GiB"),
            (10 << 30, "10 GiB"),
            (9_990_000_000, "9.3 GiB"),
            (u64::MAX, "16777216 TiB"),
        ];
        for (b, want) in cases {
            assert_eq!(human_bytes(b), want, "{b}");
        }
    }
}
