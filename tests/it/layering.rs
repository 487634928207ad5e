//! The layering rule of `src/lib.rs` (its ```text block), checked against every `crate::` path
//! in `src/`: a module may use itself, external crates and the layers its line lists. Comments,
//! strings and `#[cfg(test)] mod …` blocks are not read (the rule says why tests are exempt).

use std::collections::BTreeMap;
use std::path::Path;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Layer → the layers it may use (`None`: any).
type Rule = BTreeMap<String, Option<Vec<String>>>;

/// Reads the first ```text block of the `//!` doc of `lib_rs`: lines `layer: a, b` (`-` for
/// none, `*` for any).
fn parse_rule(lib_rs: &str) -> Result<Rule, String> {
    let doc: Vec<&str> = lib_rs
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| *l == "```text")
        .ok_or("src/lib.rs: no ```text block with the layering rule in its doc")?;
    let mut rule = Rule::new();
    for line in &doc[start + 1..] {
        if *line == "```" {
            return if rule.is_empty() {
                Err("src/lib.rs: the layering block is empty".into())
            } else {
                Ok(rule)
            };
        }
        let (layer, uses) = line
            .split_once(':')
            .ok_or_else(|| format!("src/lib.rs: not `layer: uses`: {line:?}"))?;
        let uses = match uses.trim() {
            "*" => None,
            "-" => Some(Vec::new()),
            list => Some(list.split(',').map(|s| s.trim().to_string()).collect()),
        };
        rule.insert(layer.trim().to_string(), uses);
    }
    Err("src/lib.rs: the layering block is not closed".into())
}

/// `text` with comments, string and char literals blanked to spaces (newlines kept, so line
/// numbers hold).
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident(c[i - 1]))
            && raw_string_end(&c, i).is_some()
        {
            let end = raw_string_end(&c, i).unwrap_or(c.len());
            while i < end {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\'' && char_literal_len(&c[i..]).is_some() {
            let n = char_literal_len(&c[i..]).unwrap_or(1);
            for _ in 0..n {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// The end (exclusive) of a raw string `r#"…"#` starting at `i`.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// Length of the char literal at the start of `c` (`'a'`, `'\n'`, `'\u{1F600}'`), `None` for a
/// lifetime or label (`'a`).
fn char_literal_len(c: &[char]) -> Option<usize> {
    if c.get(1) == Some(&'\\') {
        let close = c.iter().skip(2).position(|&ch| ch == '\'')?;
        return Some(close + 3);
    }
    (c.get(2) == Some(&'\'')).then_some(3)
}

/// `code` with every `#[cfg(test)] mod name { … }` blanked.
fn without_test_mods(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|k| k + from) {
        let after = &out[at + "#[cfg(test)]".len()..];
        let rest = after.trim_start();
        // `mod`, `pub mod`, `pub(super) mod`…
        let rest = match rest.strip_prefix("pub") {
            Some(r) if r.starts_with('(') => r.split_once(')').map_or(r, |(_, r)| r),
            Some(r) => r,
            None => rest,
        };
        let is_mod = rest.trim_start().starts_with("mod ");
        let open = after.find('{').map(|k| k + at + "#[cfg(test)]".len());
        let (true, Some(open)) = (is_mod, open) else {
            from = at + 1;
            continue;
        };
        let mut depth = 0;
        let mut end = out.len();
        for (k, ch) in out[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blanked: String = out[at..end]
            .chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
        from = end;
    }
    out
}

/// The top-level modules a file's code names through `crate::` (or through enough `super::`
/// to reach the crate root), with 1-based lines.
fn crate_uses(code: &str, depth: usize) -> Vec<(usize, String)> {
    let tokens = tokenize(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (line, tok) = &tokens[i];
        let root = if tok == "crate" && (i == 0 || tokens[i - 1].1 != "$") {
            Some(i + 1)
        } else if tok == "super" && (i == 0 || tokens[i - 1].1 != "::") {
            // `super::super::…` from a file `depth` modules below the root.
            let mut j = i;
            let mut supers = 0;
            while tokens.get(j).is_some_and(|t| t.1 == "super") {
                supers += 1;
                j += 1;
                if tokens.get(j).is_some_and(|t| t.1 == "::") {
                    j += 1;
                } else {
                    break;
                }
            }
            (supers >= depth).then_some(j - 1)
        } else {
            None
        };
        if let Some(k) = root
            && tokens.get(k).is_some_and(|t| t.1 == "::")
        {
            match tokens.get(k + 1).map(|t| t.1.as_str()) {
                Some("{") => {
                    // A group: the first name of each top-level item.
                    let mut depth = 0;
                    let mut expect = true;
                    for t in &tokens[k + 1..] {
                        match t.1.as_str() {
                            "{" => {
                                depth += 1;
                                continue;
                            }
                            "}" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            "," if depth == 1 => expect = true,
                            name if depth == 1 && expect => {
                                expect = false;
                                if name != "self" && name.chars().all(is_ident) {
                                    found.push((t.0, name.to_string()));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Some(name) if name.chars().all(is_ident) => found.push((*line, name.to_string())),
                _ => {}
            }
        }
        i += 1;
    }
    found
}

/// Identifiers, `::` and single punctuation characters, with their 1-based lines.
fn tokenize(code: &str) -> Vec<(usize, String)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        if c[i] == '\n' {
            line += 1;
            i += 1;
        } else if c[i].is_whitespace() {
            i += 1;
        } else if is_ident(c[i]) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push((line, c[start..i].iter().collect()));
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push((line, "::".into()));
            i += 2;
        } else {
            out.push((line, c[i].to_string()));
            i += 1;
        }
    }
    out
}

/// `rel` is a path under `src/` (`ui/graph_view/scene.rs`): its layer, and how many modules
/// below the crate root its code sits.
fn layer_of(rel: &str) -> (String, usize) {
    let parts: Vec<&str> = rel.split('/').collect();
    let layer = parts[0].trim_end_matches(".rs").to_string();
    let last = parts[parts.len() - 1];
    let depth = parts.len() - usize::from(last == "mod.rs");
    (layer, depth)
}

/// Every use against `rule` in one file, as `src/<rel>:<line>: <layer> uses <other>`.
fn check_file(rule: &Rule, rel: &str, text: &str) -> Vec<String> {
    let (layer, depth) = layer_of(rel);
    let Some(allowed) = rule.get(&layer) else {
        return vec![format!(
            "src/{rel}:1: {layer} is not in the layering rule of src/lib.rs"
        )];
    };
    let code = without_test_mods(&code_only(text));
    crate_uses(&code, depth)
        .into_iter()
        .filter(|(_, other)| {
            *other != layer
                && allowed
                    .as_ref()
                    .is_some_and(|a| !a.iter().any(|x| x == other))
        })
        .map(|(line, other)| format!("src/{rel}:{line}: {layer} uses {other}"))
        .collect()
}

fn check_tree(rule: &Rule, src: &Path) -> Vec<String> {
    let mut violations = Vec::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.expect("walk src/");
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path
            .strip_prefix(src)
            .expect("under src/")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("read a source file");
        violations.extend(check_file(rule, &rel, &text));
    }
    violations
}

fn rule() -> Rule {
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("src/lib.rs");
    parse_rule(&lib).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn src_follows_the_layering_rule() {
    let violations = check_tree(&rule(), Path::new(SRC));
    assert!(
        violations.is_empty(),
        "{} imports against the layering rule of src/lib.rs:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn the_rule_names_every_top_level_module() {
    let rule = rule();
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("src/lib.rs");
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert!(!declared.is_empty());
    for m in &declared {
        assert!(rule.contains_key(*m), "`{m}` is missing from the rule");
    }
    for (layer, uses) in &rule {
        assert!(declared.contains(&layer.as_str()), "rule names `{layer}`");
        for u in uses.iter().flatten() {
            assert!(
                declared.contains(&u.as_str()),
                "`{layer}` may use unknown `{u}`"
            );
        }
    }
}

#[test]
fn a_bad_import_is_reported() {
    let rule = parse_rule(
        "//! ```text\n//! model: error\n//! ui: app, model\n//! app: model\n//! error: -\n//! ```\n",
    )
    .expect("rule");
    let bad = "\
use crate::model::fx::FxFile; // fine
// use crate::app::App;  (a comment is not an import)
use crate::{error::Error, ui::palette};
/* crate::app::App */ const S: &str = \"crate::app::x\";
fn f() -> char {
    let _ = crate::app::state::run(1);
    'x'
}
#[cfg(test)]
mod tests {
    use crate::ui::Fxray;
}
#[cfg(test)]
pub(super) mod more_tests {
    use crate::app::App;
}
";
    let got = check_file(&rule, "model/bad.rs", bad);
    assert_eq!(
        got,
        vec![
            "src/model/bad.rs:3: model uses ui",
            "src/model/bad.rs:6: model uses app",
        ]
    );
    // `super::` from a layer's top reaches the crate root.
    let sneaky = "use super::app::App;\n";
    assert_eq!(
        check_file(&rule, "model/mod.rs", sneaky),
        vec!["src/model/mod.rs:1: model uses app"]
    );
    assert_eq!(
        check_file(&rule, "model/fx.rs", sneaky),
        Vec::<String>::new()
    );
    // A module the rule does not name.
    assert_eq!(
        check_file(&rule, "extra.rs", ""),
        vec!["src/extra.rs:1: extra is not in the layering rule of src/lib.rs"]
    );
    // The real tree, with one bad line added, fails.
    let real = rule_and_bad_file();
    assert!(
        real.iter()
            .any(|v| v == "src/analysis/bad.rs:1: analysis uses ui"),
        "{real:?}"
    );
}

/// The CLI reaches the app only through the window: a headless composition it needs lives in
/// `pipeline`, and reaching for it through `app` (where the window runs it in a job) fails.
#[test]
fn the_cli_may_not_reach_into_the_app() {
    let got = check_file(
        &rule(),
        "cli/bad.rs",
        "use crate::pipeline::compiles::stories; // fine\n\
         use crate::app::compiles::CompilesState;\n\
         fn f() { let _ = crate::app::App::new(); }\n",
    );
    assert_eq!(
        got,
        vec![
            "src/cli/bad.rs:2: cli uses app",
            "src/cli/bad.rs:3: cli uses app"
        ]
    );
    // The window is the one door: `ui::run_native`, `ui::Fxray::headless`.
    assert!(check_file(&rule(), "cli/ok.rs", "use crate::ui::Fxray;\n").is_empty());
}

/// The checker run over a file written as `src/analysis/bad.rs` with the real rule.
fn rule_and_bad_file() -> Vec<String> {
    check_file(
        &rule(),
        "analysis/bad.rs",
        "use crate::ui::palette::ADDED;\n",
    )
}

/// Every panel shows "working on it" the same way: through `ui::loading` (`show` for a
/// `Loading<T>`, `busy` otherwise), so a spinner drawn by hand elsewhere is a second look.
#[test]
fn spinners_are_drawn_by_ui_loading_only() {
    let ui = Path::new(SRC).join("ui");
    let mut hand_drawn = Vec::new();
    for entry in walkdir::WalkDir::new(&ui).sort_by_file_name() {
        let entry = entry.expect("walk src/ui");
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("ui/loading.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("read a source file");
        let code = without_test_mods(&code_only(&text));
        for (i, line) in code.lines().enumerate() {
            if line.contains(".spinner()") || line.contains("egui::Spinner") {
                hand_drawn.push(format!("{}:{}", path.display(), i + 1));
            }
        }
    }
    assert!(
        hand_drawn.is_empty(),
        "spinners drawn by hand (use ui::loading::show or ui::loading::busy):\n{}",
        hand_drawn.join("\n")
    );
}

/// What `sources::remote` asks of an agent: a file door's requests and the one that carries
/// any pipeline op (`pipeline::remote`). A feature gets an `Op`, not a request of its own.
const FILE_DOOR: &[&str] = &[
    "About", "Ping", "Stat", "OpenRoot", "ReadDir", "Scan", "Walk", "Read", "Watch", "Op", "Cancel",
];

/// The variants of `pub enum Request` in `proto` (the text of `sources/remote/proto.rs`) that
/// are not the file door's.
fn requests_beyond_the_file_door(proto: &str) -> Vec<String> {
    let code = code_only(proto);
    let body = code
        .split_once("pub enum Request {")
        .map(|(_, rest)| rest)
        .expect("pub enum Request in proto.rs");
    let mut depth = 0;
    let mut variants = Vec::new();
    let mut word = String::new();
    for ch in body.chars() {
        match ch {
            '{' | '(' => depth += 1,
            '}' | ')' if depth == 0 => break,
            '}' | ')' => depth -= 1,
            c if depth == 0 && (c.is_alphanumeric() || c == '_') => word.push(c),
            _ => {
                if depth == 0 && !word.is_empty() && word.starts_with(char::is_uppercase) {
                    variants.push(std::mem::take(&mut word));
                }
                word.clear();
            }
        }
    }
    variants.dedup();
    variants
        .into_iter()
        .filter(|v| !FILE_DOOR.contains(&v.as_str()))
        .collect()
}

#[test]
fn the_protocol_of_sources_is_a_file_door_and_one_op_request() {
    let proto =
        std::fs::read_to_string(Path::new(SRC).join("sources/remote/proto.rs")).expect("proto.rs");
    assert_eq!(
        requests_beyond_the_file_door(&proto),
        Vec::<String>::new(),
        "a feature's request in sources: implement pipeline::remote::Op instead"
    );
    // A feature's request added to the real protocol is reported...
    let with_feature = proto.replacen(
        "pub enum Request {",
        "pub enum Request {\n    /// Facts of graphs.\n    Facts { paths: Vec<String> },",
        1,
    );
    assert_eq!(requests_beyond_the_file_door(&with_feature), vec!["Facts"]);
    // ...and so is a pipeline feature named in `sources`.
    assert_eq!(
        check_file(
            &rule(),
            "sources/remote/bad.rs",
            "fn f() { let _ = crate::pipeline::facts::of_all(&[]); }\n",
        ),
        vec!["src/sources/remote/bad.rs:1: sources uses pipeline"]
    );
}
