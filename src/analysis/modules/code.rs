//! What a statement's source line says about modules: which attributes of `self` it reads and
//! which children it calls.

/// `code` reads `self.<attr>` (followed by something that cannot continue a name).
pub fn mentions(code: &str, attr: &str) -> bool {
    occurs(code, &format!("self.{attr}"), false)
}

/// `code` reads `<owner>.<attr>` from outside `owner` (`self.dt_proj.weight`, `conv1d.bias`).
pub fn reads_attribute(code: &str, owner: &str, attr: &str) -> bool {
    occurs(code, &format!("{owner}.{attr}"), true)
}

/// `needle` stands in `code` as a whole name: nothing that continues a name after it, and
/// before it no letter, digit or `_` (nor a `.` unless `after_dot`: `other.self.x` is no read
/// of `self.x`).
fn occurs(code: &str, needle: &str, after_dot: bool) -> bool {
    code.match_indices(needle).any(|(at, _)| {
        let after = code[at + needle.len()..].chars().next();
        let before = code[..at].chars().next_back();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || (c == '.' && !after_dot))
    })
}

/// `y` of every `self.y` in `code`, with what follows it.
pub fn self_attributes(code: &str) -> impl Iterator<Item = (&str, &str)> {
    code.match_indices("self.").filter_map(|(at, _)| {
        let fresh = !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let rest = &code[at + 5..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (fresh && len > 0).then(|| (&rest[..len], &rest[len..]))
    })
}

/// `y` of every `self.y(` in `code`.
pub fn called_names(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (y, after) in self_attributes(code) {
        if after.starts_with('(') && !out.contains(&y) {
            out.push(y);
        }
    }
    out
}

/// `y` when the whole line is one call of a child, `a, b = self.y(…)` or `return self.y(…)`,
/// and calls no other (`self.attn(self.norm(x))` runs the norm on the line too): every node
/// under the line is then `y`'s.
pub fn whole_call(code: &str) -> Option<&str> {
    if called_names(code).len() != 1 {
        return None;
    }
    let code = code.trim();
    let rhs = match code.strip_prefix("return ") {
        Some(r) => r,
        None => {
            let eq = code.find('=')?;
            let lhs = &code[..eq];
            let plain = lhs
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ',' || c == ' ');
            if !plain || code[eq + 1..].starts_with('=') {
                return None;
            }
            &code[eq + 1..]
        }
    };
    let rest = rhs.trim().strip_prefix("self.")?;
    let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let args = rest[len..].strip_prefix('(')?;
    // One call: its parenthesis closes at the end of the line.
    let mut depth = 1usize;
    for (i, c) in args.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return args[i + 1..].trim().is_empty().then_some(&rest[..len]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_needs_a_whole_name() {
        assert!(mentions("return self.weight * x", "weight"));
        assert!(!mentions("return self.weight_g * x", "weight"));
        assert!(!mentions("return other.self.weight", "weight"));
        assert!(mentions("cos = self.cos_cached[:T]", "cos_cached"));
    }

    #[test]
    fn called_names_are_method_calls_on_self() {
        assert_eq!(
            called_names("return self.lm_head(self.ln_f(x)) + self.bias"),
            ["lm_head", "ln_f"]
        );
    }

    #[test]
    fn whole_calls() {
        assert_eq!(
            whole_call("hidden_states = self.dropout(hidden_states)"),
            Some("dropout")
        );
        assert_eq!(whole_call("return self.act(input)"), Some("act"));
        assert_eq!(whole_call("x, y = self.f(a, g(b))"), Some("f"));
        assert_eq!(whole_call("x = x + self.dropout(y)"), None);
        assert_eq!(whole_call("x = self.q(h).view(s)"), None);
        assert_eq!(whole_call("x[0] = self.f(y)"), None);
        assert_eq!(whole_call("x == self.f(y)"), None);
        assert_eq!(whole_call("x = self.attn(self.norm(x))"), None);
    }
}
