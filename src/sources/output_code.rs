//! Helpers over `output_code.py` (docs/formats.md §1.5 for npugraph_ex, §6 for Inductor).
//!
//! Two ways to find where an FX node appears in the generated code (both in
//! `model::output_code`, re-exported here):
//! - [`lines_naming`]: one pass over the text per call (about a millisecond per MB).
//! - [`OutputCodeIndex`]: built once per file (one pass), then every identifier lookup is a hash
//!   probe. The inspector keeps one per open file and calls it on every node click.

use crate::model::output_code::is_word_byte;
pub use crate::model::output_code::{OutputCodeIndex, lines_naming};
use regex::Regex;
use std::sync::LazyLock;

/// `graph_K` of `fx_graph_name="graph_K"` in npugraph_ex's `AclGraphCacheInfo(...)`: the link
/// from a model folder to its capture JSON `graph_K_id_…json` (the JSON may land in another
/// model folder, so join by this name, not by folder).
pub fn fx_graph_name(text: &str) -> Option<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"\bfx_graph_name\s*=\s*["']([^"'\n]+)["']"#).expect("static regex")
    });
    RE.captures(text).map(|c| c[1].to_string())
}

/// `0_forward` of Inductor's first line `# AOT ID: ['0_forward']` (npugraph_ex's CPU stand-in
/// writes `['model__0_forward']`).
pub fn aot_id(text: &str) -> Option<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^# AOT ID: \[['"]([^'"\n]*)['"]\]"#).expect("static regex")
    });
    RE.captures(text).map(|c| c[1].to_string())
}

/// Inductor's `# Topologically Sorted Source Nodes: [add, mul], Original ATen: [...]` comments:
/// `(kernel or buffer name, FX nodes, 1-based line of the comment)`.
///
/// The name is the kernel the comment annotates: the `# [Provenance debug handles] name:n`
/// comment that follows it, else the next code line: a call (`extern_kernels.mm(…)`,
/// `triton_poi_fused_add_0.run(…)`), a kernel definition (`name = async_compile.…`), or a
/// fallback op's output buffer (`buf3 = torch.ops.…`). Empty when none follows within a few
/// lines. In CPU runs only extern-kernel calls carry the comment; `cpp_fused_*` kernels do not.
pub fn inductor_kernel_sources(text: &str) -> Vec<(String, Vec<String>, usize)> {
    const MARK: &str = "# Topologically Sorted Source Nodes: [";
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(MARK) else {
            continue;
        };
        let list = rest.split_once(']').map_or(rest, |(l, _)| l);
        let nodes = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let name = kernel_after(&lines[i + 1..]).unwrap_or_default();
        out.push((name, nodes, i + 1));
    }
    out
}

/// Lines a kernel's call or definition may sit below its source-node comment (GPU runs put
/// `stream0 = get_raw_stream(0)` and a provenance comment in between).
const KERNEL_LOOKAHEAD: usize = 6;

fn kernel_after(following: &[&str]) -> Option<String> {
    for line in following.iter().take(KERNEL_LOOKAHEAD) {
        let t = line.trim();
        if let Some(handle) = t.strip_prefix("# [Provenance debug handles] ") {
            let name = handle.rsplit_once(':').map_or(handle, |(n, _)| n);
            return Some(name.to_string());
        }
        if t.is_empty() || t.starts_with('#') || t.contains(" = get_raw_stream(") {
            continue;
        }
        return kernel_on_code_line(t);
    }
    None
}

fn kernel_on_code_line(t: &str) -> Option<String> {
    let name_len = t
        .bytes()
        .take_while(|&b| is_word_byte(b) || b == b'.')
        .count();
    let (name, rest) = t.split_at(name_len);
    if name.is_empty() {
        return None;
    }
    if rest.starts_with(" = ") {
        return Some(name.to_string());
    }
    let name = name.strip_suffix(".run").unwrap_or(name);
    rest.starts_with('(').then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels() {
        let text = "        # Topologically Sorted Source Nodes: [add, mul], Original ATen: [aten.add]\n\
                    \x20       stream0 = get_raw_stream(0)\n\
                    \x20       triton_poi_fused_add_mul_0.run(arg0_1, buf0, 4, stream=stream0)\n\
                    # Topologically Sorted Source Nodes: [sin], Original ATen: [aten.sin]\n\
                    # Source node to ATen node mapping:\n\
                    triton_poi_fused_sin_1 = async_compile.triton('x', '''\n";
        let k = inductor_kernel_sources(text);
        assert_eq!(k[0].0, "triton_poi_fused_add_mul_0");
        assert_eq!(k[0].1, vec!["add", "mul"]);
        assert_eq!((k[1].0.as_str(), k[1].2), ("triton_poi_fused_sin_1", 4));
    }
}
