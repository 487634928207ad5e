//! Colours with a meaning, shared by every view that shows a diff.

use egui::Color32;

pub const ADDED: Color32 = Color32::from_rgb(60, 200, 90);
pub const REMOVED: Color32 = Color32::from_rgb(230, 70, 70);
pub const CHANGED: Color32 = Color32::from_rgb(240, 170, 30);
