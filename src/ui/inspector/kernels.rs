//! The kernels a node became, from Inductor's provenance: each kernel's call and definition
//! in `output_code.py`, one click from the code viewer. Names in the code cannot find a node
//! Inductor fused (`mul_2` inside `cpp_fused_gelu_0`); provenance can.

use super::*;
use crate::analysis::provenance::{NodeKernels, Side};

/// The section, when the phase's provenance names `node`; `None` (nothing drawn) otherwise,
/// so the caller falls back to names in the code.
pub(super) fn provenance_view(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    code: &OutputCodeIndex,
    node: &FxNode,
) -> Option<Option<Action>> {
    let cp = match &ph.code_provenance {
        crate::app::Loading::Ready(cp) => cp,
        crate::app::Loading::Loading => {
            ui.label(RichText::new("In output_code.py").strong());
            crate::ui::loading::busy(ui, "Reading Inductor's provenance…");
            return Some(None);
        }
        crate::app::Loading::Failed(e) => {
            ui.weak(format!("provenance unreadable ({e}): lines found by name"));
            return None;
        }
        crate::app::Loading::Idle => return None,
    };
    let found = cp.of(&node.name, ph.provenance_side)?;
    Some(kernel_rows(ui, code, &found))
}

fn kernel_rows(ui: &mut egui::Ui, code: &OutputCodeIndex, k: &NodeKernels) -> Option<Action> {
    ui.label(
        RichText::new(format!(
            "In output_code.py, from provenance ({} kernel{})",
            k.kernels.len(),
            if k.kernels.len() == 1 { "" } else { "s" }
        ))
        .strong(),
    )
    .on_hover_text(
        "Inductor's provenance (inductor_provenance_tracking_node_mappings.json): the kernels \
         that run this node, each with the line that calls it and the line that defines it",
    );
    if !k.via.is_empty() {
        let via = k.via.join(", ");
        let text = match k.side {
            Side::PostGrad => format!("from pre-grad {via}"),
            Side::PreGrad => format!("became post-grad {via}"),
        };
        ui.add(egui::Label::new(RichText::new(text).small()).wrap());
    }
    if k.kernels.is_empty() {
        ui.weak("no kernel of its own (a view or a fold into its users)");
        return None;
    }
    let mut action = None;
    for kernel in k.kernels.iter().take(MAX_LIST_ROWS) {
        ui.label(RichText::new(&kernel.handle).monospace().small());
        if kernel.call.is_none() && kernel.definition.is_none() {
            ui.weak("  not found in this output_code.py");
        }
        for n in kernel.lines() {
            if code_line_link(ui, code, n, false) {
                action = Some(Action::CodeLine(n));
            }
        }
    }
    more(ui, k.kernels.len());
    action
}
