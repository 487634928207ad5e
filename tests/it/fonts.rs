//! Every non-ASCII character the source writes in a string or char literal has a glyph in both
//! font families of the running app (a missing one is drawn as an empty box). The app's fonts
//! are read back from a real window's context, so the test also proves they are installed.

use crate::common::ui::harness;
use fxray::app::App;
use std::collections::BTreeMap;
use std::path::Path;

/// Non-ASCII characters inside the string and char literals of `code`, with the line of their
/// first use. Comment lines are skipped: only what can reach the screen counts.
fn literal_chars(code: &str, file: &str, out: &mut BTreeMap<char, String>) {
    for (no, line) in code.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let mut in_str = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_str => {
                    chars.next();
                }
                '"' => in_str = !in_str,
                '/' if !in_str && chars.peek() == Some(&'/') => break,
                '\'' if !in_str => {
                    // A char literal such as '·' (lifetimes have no closing quote after one char).
                    let mut ahead = chars.clone();
                    if let (Some(ch), Some('\'')) = (ahead.next(), ahead.next())
                        && !ch.is_ascii()
                    {
                        out.entry(ch)
                            .or_insert_with(|| format!("{file}:{}", no + 1));
                    }
                }
                c if in_str && !c.is_ascii() => {
                    out.entry(c).or_insert_with(|| format!("{file}:{}", no + 1));
                }
                _ => {}
            }
        }
    }
}

fn source_chars() -> BTreeMap<char, String> {
    let mut out = BTreeMap::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in walkdir::WalkDir::new(&src) {
        let e = e.unwrap();
        if e.path().extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let rel = e.path().strip_prefix(&src).unwrap().display().to_string();
            literal_chars(&text, &rel, &mut out);
        }
    }
    out
}

/// The characters of `wanted` that no font of a family of `fonts` has. Read from the fonts'
/// own character maps: egui's `has_glyph` answers "no" for any character owned by the font that
/// also holds its replacement glyph, so it cannot be asked.
fn missing(fonts: &egui::FontDefinitions, wanted: &BTreeMap<char, String>) -> Vec<String> {
    let mut out = Vec::new();
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        let faces: Vec<ttf_parser::Face<'_>> = fonts.families[&family]
            .iter()
            .map(|name| {
                let data = &fonts.font_data[name];
                ttf_parser::Face::parse(&data.font, data.index).expect("a font egui loads")
            })
            .collect();
        for (&c, at) in wanted {
            if !faces.iter().any(|f| f.glyph_index(c).is_some()) {
                out.push(format!("{c:?} (U+{:04X}, {at}) in {family:?}", c as u32));
            }
        }
    }
    out
}

#[test]
fn every_character_the_ui_writes_has_a_glyph_in_both_families() {
    let wanted = source_chars();
    // The characters that were boxes before the fallback font: the scan must see them.
    for c in ['→', '▸', '✓'] {
        assert!(
            wanted.contains_key(&c),
            "{c} no longer in the source? update this test"
        );
    }
    // The fonts the running app draws with, read back from its context.
    let mut h = harness(App::new());
    h.run_steps(2);
    let fonts = h.ctx.fonts(|f| f.definitions().clone());
    let gaps = missing(&fonts, &wanted);
    assert!(gaps.is_empty(), "no glyph for:\n{}", gaps.join("\n"));
    // The check can fail: egui's own fonts lack `✓`, and an Egyptian hieroglyph is in none.
    let check = BTreeMap::from([('✓', "test".to_string())]);
    assert_eq!(missing(&egui::FontDefinitions::default(), &check).len(), 2);
    let odd = BTreeMap::from([('\u{13000}', "test".to_string())]);
    assert_eq!(missing(&fonts, &odd).len(), 2);
}

#[test]
fn the_scanner_reads_strings_and_chars_but_not_comments() {
    let mut out = BTreeMap::new();
    literal_chars(
        "// “quoted” in a comment\nlet a = \"x → y\"; let b = '·'; // ✓ trailing\nfn f<'a>(s: &'a str) {}\nlet e = \"\\\"✗\\\"\";",
        "f.rs",
        &mut out,
    );
    assert_eq!(out.keys().collect::<String>(), "·→✗");
    assert_eq!(out[&'→'], "f.rs:2");
}
