//! Inductor's provenance joined to `output_code.py` (`analysis::provenance`): the kernels and
//! code lines a node became, on the `inductor/a_mlp_inference` fixture (torch 2.15,
//! `TORCH_COMPILE_DEBUG=1`, which sets `provenance_tracking_level` to 1). Lines counted on its
//! `output_code.py`: `cpp_fused_gelu_0` is defined on line 34 and called on line 96, the two
//! `extern_kernels.addmm` calls are lines 89 and 100.

use crate::common::{fixture, trace_of};
use fxray::analysis::provenance::{CodeProvenance, Side};
use fxray::model::compile::GraphKind;
use fxray::model::output_code::OutputCodeIndex;
use fxray::sources::{load, read, trace_log};

const MLP: &str = "inductor/a_mlp_inference";

fn tree_provenance() -> (CodeProvenance, OutputCodeIndex) {
    let index = fxray::pipeline::tree::index(&fixture(MLP)).unwrap();
    let phase = &index.runs[0].models[0].phases[0];
    let json = phase
        .provenance()
        .expect("the phase lists its provenance JSON");
    let code = OutputCodeIndex::new(
        &read::read_text(phase.output_code.as_ref().unwrap())
            .unwrap()
            .text,
    );
    let cp = CodeProvenance::build(vec![load::provenance(json).unwrap()], &code);
    (cp, code)
}

fn handles(k: &fxray::analysis::provenance::NodeKernels) -> Vec<String> {
    k.kernels.iter().map(|k| k.handle.clone()).collect()
}

#[test]
fn a_fused_node_gets_its_kernel_call_and_definition_from_provenance() {
    let (cp, code) = tree_provenance();
    // mul_2 (the GELU's last multiply) runs inside cpp_fused_gelu_0: its name is nowhere in
    // the code, so matching names finds nothing.
    assert!(code.lines_naming("mul_2").is_empty());
    let k = cp.of("mul_2", Side::PostGrad).unwrap();
    assert_eq!(k.side, Side::PostGrad);
    assert_eq!(k.via, ["h"], "from the pre-grad gelu `h`");
    assert_eq!(handles(&k), ["cpp_fused_gelu_0:2"]);
    let kernel = k.kernels[0];
    assert_eq!(kernel.kernel, "cpp_fused_gelu_0");
    assert_eq!((kernel.call, kernel.definition), (Some(96), Some(34)));
    assert_eq!(code.line(96).unwrap().trim(), "cpp_fused_gelu_0(buf1)");
    // The extern matmuls: called, not defined in the file.
    let addmm = cp.of("addmm", Side::PostGrad).unwrap();
    assert_eq!(handles(&addmm), ["extern_kernels.addmm:1"]);
    assert_eq!(
        (addmm.kernels[0].call, addmm.kernels[0].definition),
        (Some(89), None)
    );
    let addmm_1 = cp.of("addmm_1", Side::PostGrad).unwrap();
    assert_eq!(addmm_1.kernels[0].call, Some(100));
    // A view Inductor folded into the matmul's arguments has no kernel of its own.
    let permute = cp.of("permute", Side::PostGrad).unwrap();
    assert!(permute.kernels.is_empty());
    assert_eq!(permute.via, ["linear"]);
}

#[test]
fn a_pre_grad_node_reaches_the_kernels_of_what_it_became() {
    let (cp, _) = tree_provenance();
    let h = cp.of("h", Side::PreGrad).unwrap();
    assert_eq!(h.via, ["mul", "mul_1", "erf", "add", "mul_2"]);
    assert_eq!(handles(&h), ["cpp_fused_gelu_0:2"]);
    let linear_1 = cp.of("linear_1", Side::PreGrad).unwrap();
    assert_eq!(linear_1.via, ["permute_1", "addmm_1"]);
    assert_eq!(handles(&linear_1), ["extern_kernels.addmm:3"]);
    assert_eq!(linear_1.kernels[0].call, Some(100));
    // Placeholders are in no map: the inspector falls back to names.
    assert!(cp.of("arg0_1", Side::PostGrad).is_none());
}

#[test]
fn every_post_grad_op_of_the_tree_is_named_by_provenance() {
    let (cp, _) = tree_provenance();
    let index = fxray::pipeline::tree::index(&fixture(MLP)).unwrap();
    let phase = &index.runs[0].models[0].phases[0];
    let post = phase
        .passes
        .iter()
        .find(|p| p.name == "fx_graph_transformed")
        .unwrap();
    let g = load::graph(&post.path).unwrap();
    let ops: Vec<&str> = g.graphs[0]
        .nodes
        .iter()
        .filter(|n| n.op == fxray::model::fx::OpKind::CallFunction)
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(
        ops.len(),
        9,
        "permute, addmm, 5 GELU ops, permute_1, addmm_1"
    );
    for op in ops {
        let k = cp.of(op, Side::PostGrad).unwrap_or_else(|| panic!("{op}"));
        assert_eq!(k.side, Side::PostGrad, "{op}");
    }
}

#[test]
fn the_trace_logs_provenance_joins_to_the_code_it_logged() {
    // The same run's trace log carries the same mapping and the same code.
    let t = trace_log::load(&trace_of(&fixture(MLP))).unwrap();
    let c = &t.compiles[0];
    let code = c
        .graphs
        .iter()
        .find(|g| g.kind == GraphKind::OutputCode)
        .map(|g| OutputCodeIndex::new(&g.text))
        .unwrap();
    let cp = CodeProvenance::build(c.provenances(c.attempt), &code);
    let k = cp.of("mul_2", Side::PostGrad).unwrap();
    let call = k.kernels[0].call.unwrap();
    assert_eq!(code.line(call).unwrap().trim(), "cpp_fused_gelu_0(buf1)");
    let (tree, _) = tree_provenance();
    for node in ["addmm", "mul_2", "addmm_1", "h", "linear"] {
        let a = cp.of(node, Side::PostGrad).map(|k| handles(&k));
        let b = tree.of(node, Side::PostGrad).map(|k| handles(&k));
        assert_eq!(a, b, "{node}");
    }
}

/// Joins every Inductor phase under `root` that has provenance to its code and checks that
/// each kernel handle the JSON names was found at a line calling that kernel. Returns the
/// number of handles checked. Also run on fresh torch runs (`e2e_torch_compiles`).
pub fn check_tree_provenance(root: &std::path::Path) -> usize {
    let index = fxray::pipeline::tree::index(root).unwrap();
    let mut checked = 0;
    for phase in index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
    {
        let (Some(json), Some(code)) = (phase.provenance(), phase.output_code.as_ref()) else {
            continue;
        };
        let code = OutputCodeIndex::new(&read::read_text(code).unwrap().text);
        let cp = CodeProvenance::build(vec![load::provenance(json).unwrap()], &code);
        for k in cp.kernels() {
            let at = k
                .call
                .unwrap_or_else(|| panic!("{}: {} not found", json.display(), k.handle));
            let line = code.line(at).unwrap();
            assert!(
                line.contains(&k.kernel),
                "{}: {} at {at}: {line}",
                json.display(),
                k.handle
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_kernel_of_every_committed_provenance_is_found_at_its_call() {
    // The Inductor fixtures and torch 2.15's cases: all written with provenance.
    let mut n = 0;
    for case in ["inductor", "torch_versions/2.15.0"] {
        n += check_tree_provenance(&fixture(case));
    }
    // 57: the kernel entries of `*CodeToPost` over those JSON files.
    assert_eq!(n, 57, "kernel handles checked");
}
