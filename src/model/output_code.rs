//! `output_code.py` in memory, indexed by identifier: the inspector asks it, on every node
//! click, where the node appears in the generated code.
//!
//! A node "appears" on a line when its name occurs there as a whole identifier: the characters
//! around it are not `[A-Za-z0-9_]` (nor non-ASCII, which Python allows in identifiers), so
//! `add_1` does not match `add_10` or `xadd_1`.

use std::collections::HashMap;

/// 1-based lines where `node` occurs as a whole identifier (each line once, ascending).
/// A name that starts or ends with a non-word character (`aten.add`) is matched as a substring
/// with boundaries checked only on its word-character ends.
pub fn lines_naming(text: &str, node: &str) -> Vec<usize> {
    if node.is_empty() {
        return Vec::new();
    }
    let b = text.as_bytes();
    let mut lines = Vec::new();
    let (mut line, mut counted_to) = (1usize, 0usize);
    for (at, _) in text.match_indices(node) {
        if !whole_word(b, at, node) {
            continue;
        }
        line += count_newlines(&b[counted_to..at]);
        counted_to = at;
        if lines.last() != Some(&line) {
            lines.push(line);
        }
    }
    lines
}

fn whole_word(b: &[u8], at: usize, node: &str) -> bool {
    let n = node.as_bytes();
    let end = at + n.len();
    // A word after a dot is an attribute (`aten.mul`), not the variable `mul`.
    let left_ok = !is_word_byte(n[0]) || at == 0 || !(is_word_byte(b[at - 1]) || b[at - 1] == b'.');
    let right_ok = !is_word_byte(n[n.len() - 1]) || b.get(end).is_none_or(|&c| !is_word_byte(c));
    left_ok && right_ok
}

fn count_newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// A byte of an identifier (`[A-Za-z0-9_]`, or part of a non-ASCII character).
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Identifier → lines index of one `output_code.py`, built in one pass; lookups are O(1) plus
/// the size of the answer. Holds its own copy of the text so it can live in UI state.
#[derive(Debug, Clone, Default)]
pub struct OutputCodeIndex {
    text: String,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    /// Each identifier's 1-based lines, ascending, once per line.
    idents: HashMap<String, Vec<u32>>,
}

impl OutputCodeIndex {
    pub fn new(text: &str) -> Self {
        let mut index = OutputCodeIndex {
            text: text.to_string(),
            line_starts: vec![0],
            idents: HashMap::new(),
        };
        index.build();
        index
    }

    fn build(&mut self) {
        let b = self.text.as_bytes();
        let mut line: u32 = 1;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'\n' {
                line += 1;
                self.line_starts.push(i + 1);
                i += 1;
            } else if is_word_byte(c) {
                let start = i;
                while i < b.len() && is_word_byte(b[i]) {
                    i += 1;
                }
                // A run of word bytes starts and ends at char boundaries: non-ASCII
                // characters are taken whole. `x.mul` names an attribute, not the variable
                // `mul`: an FX node is never reached through a dot.
                let attribute = start > 0 && b[start - 1] == b'.';
                if !c.is_ascii_digit() && !attribute {
                    let word = &self.text[start..i];
                    match self.idents.get_mut(word) {
                        Some(lines) if lines.last() == Some(&line) => {}
                        Some(lines) => lines.push(line),
                        None => {
                            self.idents.insert(word.to_string(), vec![line]);
                        }
                    }
                }
            } else {
                i += 1;
            }
        }
    }

    /// Same answer as [`lines_naming`] on the indexed text.
    pub fn lines_naming(&self, node: &str) -> Vec<usize> {
        if is_identifier(node) {
            return self
                .idents
                .get(node)
                .map(|l| l.iter().map(|&n| n as usize).collect())
                .unwrap_or_default();
        }
        lines_naming(&self.text, node)
    }

    /// The first line that assigns `node` (`add_1 = torch.ops…`, `buf3 = …`), skipping the
    /// `add_1 = None` lines that free it.
    pub fn definition(&self, node: &str) -> Option<usize> {
        let lines = self.idents.get(node)?;
        lines
            .iter()
            .map(|&n| n as usize)
            .find(|&n| self.line(n).is_some_and(|text| assigns(text, node)))
    }

    /// The text of a 1-based line, without its newline.
    pub fn line(&self, n: usize) -> Option<&str> {
        let start = *self.line_starts.get(n.checked_sub(1)?)?;
        let end = self
            .line_starts
            .get(n)
            .map_or(self.text.len(), |&next| next - 1);
        self.text
            .get(start..end)
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
    }

    /// Lines as `wc -l` and editors count them: a final newline does not start a line.
    pub fn line_count(&self) -> usize {
        let trailing = self.text.ends_with('\n') as usize;
        self.line_starts.len() - trailing
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && !b[0].is_ascii_digit() && b.iter().all(|&c| is_word_byte(c))
}

/// `node` is a target left of the line's first ` = ` and the value is not just `None`.
fn assigns(line: &str, node: &str) -> bool {
    let Some((targets, value)) = line.split_once(" = ") else {
        return false;
    };
    let value = value.split(';').next().unwrap_or("").trim();
    if value == "None" || value.ends_with("= None") {
        return false;
    }
    !lines_naming(targets, node).is_empty()
}

#[cfg(test)]
mod tests {
    #[test]
    fn attributes_do_not_name_the_node() {
        let code = "    mul = torch.ops.aten.mul.Tensor(a, b)\n    y = f(x, mul)\n    mul_1 = torch.ops.aten.mul.Tensor(a, b)\n    xmul = 1\n";
        assert_eq!(super::lines_naming(code, "mul"), vec![1, 2]);
        let index = super::OutputCodeIndex::new(code);
        assert_eq!(index.lines_naming("mul"), vec![1, 2]);
        assert_eq!(index.line_count(), 4);
    }

    use super::*;

    #[test]
    fn word_boundaries() {
        let text = "add_1 = f(x)\nadd_10 = g(add_1)\nxadd_1 = 0\ny = add_10\n";
        assert_eq!(lines_naming(text, "add_1"), vec![1, 2]);
        assert_eq!(lines_naming(text, "add_10"), vec![2, 4]);
        let index = OutputCodeIndex::new(text);
        assert_eq!(index.lines_naming("add_1"), vec![1, 2]);
        assert_eq!(index.definition("add_10"), Some(2));
        assert_eq!(index.line(3), Some("xadd_1 = 0"));
        assert_eq!(index.line(0), None);
    }

    #[test]
    fn definition_skips_frees() {
        let text = "y = g(a)\na = b = None\na = f(1);  b = None\n";
        assert_eq!(OutputCodeIndex::new(text).definition("a"), Some(3));
    }
}
