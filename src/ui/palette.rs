//! Every colour fxray draws with a meaning, in one place. Colours computed from data (op
//! families, heat ramps, hashed task types) are made from the constants here, or, for op
//! families, from `OpFamily::rgb` (which the SVG export shares).

use egui::Color32;

// Diffs: the graph's overlay, the pass strip, the compare bar, the text diff, the history.
pub const ADDED: Color32 = Color32::from_rgb(60, 200, 90);
pub const REMOVED: Color32 = Color32::from_rgb(230, 70, 70);
pub const CHANGED: Color32 = Color32::from_rgb(240, 170, 30);

/// Something that went well: a live watch, a run that exited 0.
pub const OK: Color32 = Color32::from_rgb(90, 180, 90);

// Tensors: NaN / Inf wherever they are shown (badges, tracer, msprobe, graph overlay).
pub const NAN: Color32 = Color32::from_rgb(214, 39, 90);
pub const INF: Color32 = Color32::from_rgb(235, 140, 35);
/// A node whose dumps hold no NaN nor Inf (graph overlay).
/// A node only one side of an accuracy compare has (where a scale error hides).
pub const UNPAIRED: Color32 = Color32::from_rgb(235, 60, 50);
pub const CLEAN: Color32 = Color32::from_rgb(70, 105, 85);
/// The graph overlay's ramp of "how much changed", from low to high.
pub const RAMP_LOW: [f32; 3] = [45.0, 70.0, 125.0];
pub const RAMP_HIGH: [f32; 3] = [245.0, 205.0, 60.0];
/// Heatmap cells: NaN (±Inf are black; finite values blue–white–red).
pub const HEAT_NAN: Color32 = Color32::from_rgb(220, 0, 220);
/// The bars of a tensor's histogram.
pub const HISTOGRAM: Color32 = Color32::from_rgb(90, 140, 220);

// The graph view.
/// The selected node's outline, and the minimap's frame of what is on screen.
pub const SELECTED: Color32 = Color32::from_rgb(255, 215, 0);
/// Producers (upstream) and consumers (downstream) of the selected node, and search hits.
pub const UPSTREAM: Color32 = Color32::from_rgb(80, 170, 255);
pub const DOWNSTREAM: Color32 = Color32::from_rgb(255, 140, 60);
pub const HIT: Color32 = Color32::from_rgb(255, 80, 200);
/// Edges, on a dark and a light background.
pub const EDGE_DARK: Color32 = Color32::from_gray(150);
pub const EDGE_LIGHT: Color32 = Color32::from_gray(110);
/// Nodes in the minimap.
pub const MINIMAP_NODE: Color32 = Color32::from_gray(160);
/// Module groups (boxes around the nodes of one `nn.Module`).
pub const GROUP: Color32 = Color32::from_rgb(150, 120, 220);

// Autotune: the winning candidate and the others.
pub const WINNER: Color32 = Color32::from_rgb(0x3c, 0xb3, 0x71);
pub const CANDIDATE: Color32 = Color32::from_rgb(0x6a, 0x8c, 0xc8);

/// The EVENT level of logs (the other levels take the theme's colours).
pub const LOG_EVENT: Color32 = Color32::from_rgb(90, 150, 230);

// The timeline.
/// aclGraph task types with a fixed colour (any other type's is hashed from its name).
pub const TASK_TYPES: [(&str, Color32); 14] = [
    ("KERNEL_AICORE", Color32::from_rgb(66, 133, 244)),
    ("KERNEL_AIVEC", Color32::from_rgb(52, 168, 83)),
    ("KERNEL_MIX_AIC", Color32::from_rgb(0, 150, 170)),
    ("KERNEL_MIX_AIV", Color32::from_rgb(150, 90, 210)),
    ("KERNEL_AICPU", Color32::from_rgb(120, 144, 156)),
    ("EVENT_RECORD", Color32::from_rgb(245, 150, 30)),
    ("EVENT_WAIT", Color32::from_rgb(230, 80, 60)),
    ("EVENT_RESET", Color32::from_rgb(190, 140, 100)),
    ("MEM_WRITE_VALUE", Color32::from_rgb(240, 200, 40)),
    ("MEM_WAIT_VALUE", Color32::from_rgb(215, 110, 150)),
    ("STREAM_ACTIVE", Color32::from_rgb(220, 40, 40)),
    ("MEMCPY_ASYNC", Color32::from_rgb(100, 190, 220)),
    ("NOP", Color32::from_gray(150)),
    ("MODEL_END_GRAPH", Color32::from_gray(90)),
];
/// Dependency arrows: a stream handover, and any other dependency.
pub const DEP_HANDOVER: Color32 = Color32::from_rgb(220, 40, 40);
pub const DEP_OTHER: Color32 = Color32::from_rgb(255, 140, 0);

/// A module's box in the folded graph: its frame, and its fill when folded.
pub const MODULE: Color32 = Color32::from_rgb(95, 130, 190);
pub const MODULE_FILL_DARK: Color32 = Color32::from_rgb(38, 46, 62);
pub const MODULE_FILL_LIGHT: Color32 = Color32::from_rgb(222, 230, 244);
