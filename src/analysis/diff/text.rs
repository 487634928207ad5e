//! The line diff of two graph files, with intra-line highlights (unicode words), and its hunks.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineTag {
    Equal,
    Delete,
    Insert,
}

/// One line of a unified text diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextDiffLine {
    pub tag: LineTag,
    /// 1-based line number in A (equal and deleted lines).
    pub old_line: Option<usize>,
    /// 1-based line number in B (equal and inserted lines).
    pub new_line: Option<usize>,
    /// The line without its line break.
    pub text: String,
    /// Byte ranges of `text` that differ from the line it replaces (intra-line highlights);
    /// empty for equal lines and for lines with no similar counterpart.
    pub spans: Vec<Range<usize>>,
}

/// A line diff of two texts (Patience, with intra-line changes), every line of both texts in
/// unified order. Gives up refining after a few seconds on huge, very different texts (the
/// result is then coarser, still correct). Use [`hunks`] to show only the changes with context.
pub fn text_diff(a: &str, b: &str) -> Vec<TextDiffLine> {
    use similar::{Algorithm, ChangeTag, TextDiff};
    use std::time::Duration;
    let d = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .timeout(Duration::from_secs(5))
        .diff_lines(a, b);
    let mut out = Vec::new();
    for op in d.ops() {
        for change in d.iter_inline_changes(op) {
            let tag = match change.tag() {
                ChangeTag::Equal => LineTag::Equal,
                ChangeTag::Delete => LineTag::Delete,
                ChangeTag::Insert => LineTag::Insert,
            };
            let mut text = String::new();
            let mut spans: Vec<Range<usize>> = Vec::new();
            for (emph, s) in change.iter_strings_lossy() {
                let start = text.len();
                text.push_str(&s);
                if emph && tag != LineTag::Equal {
                    match spans.last_mut() {
                        Some(r) if r.end == start => r.end = text.len(),
                        _ => spans.push(start..text.len()),
                    }
                }
            }
            let trimmed = text.trim_end_matches(['\n', '\r']).len();
            text.truncate(trimmed);
            spans.retain_mut(|r| {
                r.end = r.end.min(trimmed);
                r.start < r.end
            });
            out.push(TextDiffLine {
                tag,
                old_line: change.old_index().map(|i| i + 1),
                new_line: change.new_index().map(|i| i + 1),
                text,
                spans,
            });
        }
    }
    out
}

/// Ranges of `lines` to show: every changed line with `context` equal lines around it, merged
/// where they touch. Empty when the texts are equal.
pub fn hunks(lines: &[TextDiffLine], context: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.tag == LineTag::Equal {
            continue;
        }
        let r = i.saturating_sub(context)..(i + 1 + context).min(lines.len());
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_diff_lines_and_spans() {
        let a = "one\ntwo = view(x)\nthree\n";
        let b = "one\ntwo = reshape(x)\nthree\nfour\n";
        let d = text_diff(a, b);
        let tags: Vec<LineTag> = d.iter().map(|l| l.tag).collect();
        assert_eq!(
            tags,
            [
                LineTag::Equal,
                LineTag::Delete,
                LineTag::Insert,
                LineTag::Equal,
                LineTag::Insert
            ]
        );
        assert_eq!(d[1].old_line, Some(2));
        assert_eq!(d[2].new_line, Some(2));
        assert_eq!(d[4].new_line, Some(4));
        assert_eq!(d[4].text, "four");
        let del: Vec<&str> = d[1].spans.iter().map(|r| &d[1].text[r.clone()]).collect();
        let ins: Vec<&str> = d[2].spans.iter().map(|r| &d[2].text[r.clone()]).collect();
        assert_eq!(del, ["view"]);
        assert_eq!(ins, ["reshape"]);
        assert_eq!(hunks(&d, 0), [1..3, 4..5]);
        assert_eq!(hunks(&d, 1).first(), Some(&(0..5)));
        assert_eq!(hunks(&d, 1).len(), 1);
        assert!(hunks(&text_diff(a, a), 3).is_empty());
    }
}
