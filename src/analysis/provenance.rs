//! The lines of `output_code.py` each FX node became, from Inductor's provenance
//! (`inductor_provenance_tracking_node_mappings`, docs/formats.md §6 and §8): a post-grad node
//! maps to the kernels that run it, a pre-grad node to its post-grad nodes and so to theirs.
//!
//! Built once per phase (in the job that reads the phase's code), so a node click is a map
//! lookup. Matching names in the code (`OutputCodeIndex::lines_naming`) cannot find a node
//! Inductor fused into a kernel; provenance names the kernel.

use crate::model::compile::Provenance;
use crate::model::output_code::OutputCodeIndex;
use std::collections::BTreeMap;

/// The comment Inductor writes above each kernel call when it tracks provenance.
const HANDLE_MARK: &str = "# [Provenance debug handles] ";

/// Lines between a handle comment and its call (GPU code puts `stream0 = get_raw_stream(0)`
/// between them).
const CALL_LOOKAHEAD: usize = 4;

/// One kernel of the generated code and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLines {
    /// The provenance handle, `cpp_fused_gelu_0:2`, `extern_kernels.addmm:1`.
    pub handle: String,
    /// The kernel, handle number removed: `cpp_fused_gelu_0`.
    pub kernel: String,
    /// The line that runs it (the first code line after its handle comment).
    pub call: Option<usize>,
    /// The line that defines it (`cpp_fused_gelu_0 = async_compile.…`); none for extern
    /// kernels.
    pub definition: Option<usize>,
}

impl KernelLines {
    /// The call, then the definition: the lines to list under the kernel.
    pub fn lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.call.into_iter().chain(self.definition)
    }
}

/// Which graph a node name is looked up in: Inductor's passes hold post-grad names, a Dynamo
/// graph pre-grad names. The two name sets overlap (`split` may be both), so the side asked
/// first wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    PreGrad,
    PostGrad,
}

/// How a node reached its kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeKernels<'a> {
    pub side: Side,
    /// For a pre-grad node, the post-grad nodes it became (in provenance order); for a
    /// post-grad node, the pre-grad nodes it came from.
    pub via: &'a [String],
    pub kernels: Vec<&'a KernelLines>,
}

/// Provenance of every graph Inductor compiled into one `output_code.py`, joined to its lines.
#[derive(Debug, Clone, Default)]
pub struct CodeProvenance {
    provenances: Vec<Provenance>,
    kernels: BTreeMap<String, KernelLines>,
}

impl CodeProvenance {
    /// Joins `provenances` (one per graph whose code is in `code`) to the code's lines.
    pub fn build(provenances: Vec<Provenance>, code: &OutputCodeIndex) -> Self {
        let handles = handle_lines(code);
        let mut kernels = BTreeMap::new();
        for p in &provenances {
            for handle in p.kernel_to_post.keys() {
                let kernel = handle
                    .rsplit_once(':')
                    .map_or(handle.as_str(), |(k, _)| k)
                    .to_string();
                let call = handles.get(handle.as_str()).copied();
                let definition = code.definition(&kernel);
                kernels.insert(
                    handle.clone(),
                    KernelLines {
                        handle: handle.clone(),
                        kernel,
                        call,
                        definition,
                    },
                );
            }
        }
        CodeProvenance {
            provenances,
            kernels,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Every kernel the provenance names, by handle.
    pub fn kernels(&self) -> impl Iterator<Item = &KernelLines> {
        self.kernels.values()
    }

    /// The kernels of node `node`, looked up on side `first`, then on the other; `None` when
    /// provenance does not name it.
    pub fn of(&self, node: &str, first: Side) -> Option<NodeKernels<'_>> {
        let other = match first {
            Side::PreGrad => Side::PostGrad,
            Side::PostGrad => Side::PreGrad,
        };
        self.on_side(node, first)
            .or_else(|| self.on_side(node, other))
    }

    fn on_side(&self, node: &str, side: Side) -> Option<NodeKernels<'_>> {
        for p in &self.provenances {
            let (via, handles): (&[String], Vec<&String>) = match side {
                Side::PostGrad => (p.pre_grad_of(node), p.kernels_of(node).iter().collect()),
                Side::PreGrad => {
                    let Some(posts) = p.pre_to_post.get(node) else {
                        continue;
                    };
                    let mut hs: Vec<&String> = Vec::new();
                    for post in posts {
                        for h in p.kernels_of(post) {
                            if !hs.contains(&h) {
                                hs.push(h);
                            }
                        }
                    }
                    (posts.as_slice(), hs)
                }
            };
            let named = !handles.is_empty() || !via.is_empty();
            if !named {
                continue;
            }
            let mut kernels: Vec<&KernelLines> = handles
                .iter()
                .filter_map(|h| self.kernels.get(*h))
                .collect();
            // In the order they run.
            kernels.sort_by_key(|k| (k.call.unwrap_or(usize::MAX), k.handle.clone()));
            return Some(NodeKernels { side, via, kernels });
        }
        None
    }
}

/// Handle → the line of the call below its `# [Provenance debug handles]` comment.
fn handle_lines(code: &OutputCodeIndex) -> BTreeMap<&str, usize> {
    let mut out = BTreeMap::new();
    let total = code.line_count();
    for n in 1..=total {
        let Some(handle) = code
            .line(n)
            .and_then(|l| l.trim().strip_prefix(HANDLE_MARK))
        else {
            continue;
        };
        let call = (n + 1..=(n + CALL_LOOKAHEAD).min(total)).find(|&m| {
            code.line(m).is_some_and(|t| {
                let t = t.trim();
                !t.is_empty() && !t.starts_with('#') && !t.contains(" = get_raw_stream(")
            })
        });
        if let Some(call) = call {
            out.entry(handle.trim()).or_insert(call);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "cpp_fused_gelu_0 = async_compile.cpp_pybinding(['float*'], r'''\n\
                        ''')\n\
                        def call(args):\n\
                        \x20   # [Provenance debug handles] extern_kernels.addmm:1\n\
                        \x20   extern_kernels.addmm(a, b, c, out=buf0)\n\
                        \x20   buf1 = buf0; del buf0  # reuse\n\
                        \x20   # [Provenance debug handles] cpp_fused_gelu_0:2\n\
                        \x20   cpp_fused_gelu_0(buf1)\n";

    fn provenance() -> Provenance {
        Provenance::parse(
            r#"{"preToPost": {"linear": ["permute", "addmm"], "h": ["mul", "erf"]},
                "postToPre": {"addmm": ["linear"], "mul": ["h"], "erf": ["h"], "permute": ["linear"]},
                "cppCodeToPost": {"extern_kernels.addmm:1": ["addmm"], "cpp_fused_gelu_0:2": ["mul", "erf"]},
                "postToCppCode": {"addmm": ["extern_kernels.addmm:1"], "mul": ["cpp_fused_gelu_0:2"], "erf": ["cpp_fused_gelu_0:2"]}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_fused_post_grad_node_gets_its_kernel_call_and_definition() {
        let cp = CodeProvenance::build(vec![provenance()], &OutputCodeIndex::new(CODE));
        let k = cp.of("mul", Side::PostGrad).unwrap();
        assert_eq!(k.side, Side::PostGrad);
        assert_eq!(k.via, ["h"]);
        assert_eq!(k.kernels.len(), 1);
        assert_eq!(k.kernels[0].kernel, "cpp_fused_gelu_0");
        assert_eq!(k.kernels[0].lines().collect::<Vec<_>>(), [8, 1]);
    }

    #[test]
    fn a_pre_grad_node_reaches_the_kernels_of_its_post_grad_nodes_in_run_order() {
        let cp = CodeProvenance::build(vec![provenance()], &OutputCodeIndex::new(CODE));
        let k = cp.of("linear", Side::PostGrad).unwrap();
        assert_eq!(
            k.side,
            Side::PreGrad,
            "not a post-grad name: looked up as pre-grad"
        );
        assert_eq!(k.via, ["permute", "addmm"]);
        let handles: Vec<_> = k.kernels.iter().map(|k| k.handle.as_str()).collect();
        assert_eq!(handles, ["extern_kernels.addmm:1"]);
        assert_eq!(k.kernels[0].call, Some(5));
        assert_eq!(
            k.kernels[0].definition, None,
            "extern kernels are not defined here"
        );
        // A post-grad node with no kernel (a view) is still named: by its pre-grad node.
        let p = cp.of("permute", Side::PostGrad).unwrap();
        assert!(p.kernels.is_empty());
        assert_eq!(p.via, ["linear"]);
        assert!(cp.of("arg0_1", Side::PostGrad).is_none());
    }
}
