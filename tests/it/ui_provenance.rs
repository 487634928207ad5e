//! The inspector's code lines from Inductor's provenance, driven like a user: selecting a node
//! that Inductor fused lists the kernel it runs in, with the lines that call and define it
//! (counted on `inductor/a_mlp_inference`'s `output_code.py`: `cpp_fused_gelu_0` defined on
//! line 34, called on 96; the second `extern_kernels.addmm` called on 100), and a click opens
//! the code viewer at that line.

use crate::common::ui::{harness, model_named, opened, settle, shoot};
use crate::common::{fixture, trace_only};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::analysis::provenance::Side;
use fxray::ui::Fxray;

const MLP: &str = "inductor/a_mlp_inference";

/// The MLP's first pass on screen with `node` selected, its code and provenance read.
fn inspecting(node: &str) -> Harness<'static, Fxray> {
    let mut app = opened(&fixture(MLP));
    app.select_node(Some(node.into()));
    let mut h = harness(app);
    settle(&mut h);
    h
}

#[test]
fn a_fused_node_lists_its_kernel_and_a_click_opens_the_code_there() {
    let mut h = inspecting("mul_2");
    let ph = h.state().app.phase.as_ref().unwrap();
    assert!(
        ph.code_provenance.ready().is_some(),
        "provenance read with the code"
    );
    h.get_by_label("In output_code.py, from provenance (1 kernel)");
    h.get_by_label("from pre-grad h");
    h.get_by_label("cpp_fused_gelu_0:2");
    h.get_by_label_contains("34: cpp_fused_gelu_0 = async_compile.cpp_pybinding(");
    shoot(&mut h, "inspector_provenance");
    h.get_by_label("96: cpp_fused_gelu_0(buf1)").click();
    h.run_steps(3);
    let s = h.state();
    assert!(s.view.show_code, "the code window opened");
    assert_eq!(s.view.code.highlighted_line(), Some(96));
    h.get_by_label("129 lines"); // wc -l output_code.py
}

#[test]
fn a_node_provenance_does_not_name_falls_back_to_names_in_the_code() {
    // A placeholder runs in no kernel; the code names it where `call` unpacks its arguments.
    let h = inspecting("arg0_1");
    assert!(h.query_by_label_contains("from provenance").is_none());
    h.get_by_label_contains("In output_code.py (");
}

#[test]
fn a_trace_only_run_takes_a_dynamo_node_to_its_kernels() {
    // A TORCH_TRACE-only folder: the graphs, code and provenance come from the log alone,
    // served from memory; the Dynamo graph holds pre-grad names.
    let dir = trace_only(&fixture(MLP));
    let mut h = harness(opened(dir.path()));
    settle(&mut h);
    settle(&mut h);
    let model = model_named(&h, "model__0");
    assert!(
        model.phases[0].provenance().is_some(),
        "its provenance beside its code"
    );
    let dynamo = model.dynamo_graph.expect("its Dynamo graph");
    h.state_mut().app.select_graph(&dynamo);
    settle(&mut h);
    h.state_mut().app.select_node(Some("linear_1".into()));
    settle(&mut h);
    let ph = h.state().app.phase.as_ref().unwrap();
    assert_eq!(ph.provenance_side, Side::PreGrad);
    h.get_by_label("In output_code.py, from provenance (1 kernel)");
    h.get_by_label("became post-grad permute_1, addmm_1");
    h.get_by_label("extern_kernels.addmm:3");
    h.get_by_label_contains("100: extern_kernels.addmm(arg4_1, buf1,")
        .click();
    h.run_steps(3);
    assert_eq!(h.state().view.code.highlighted_line(), Some(100));
}
