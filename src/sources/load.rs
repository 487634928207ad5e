//! Reading and parsing whole artifacts from disk, the one place that joins `read` and the
//! text parsers so the CLI, the app's background jobs and benchmarks load files the same way.

use crate::error::Result;
use crate::model::fx::FxFile;
use crate::model::index::DebugIndex;
use crate::sources::{discover, fx_text, output_code, read};
use std::path::Path;

/// Reads and parses one FX graph file. Only I/O failures are errors: whatever text is there
/// parses into something (unparsed lines and problems are inside the result).
pub fn graph(path: &Path) -> Result<FxFile> {
    let text = read::read_text(path)?;
    let mut file = fx_text::parse_fx(&text.text);
    if text.binary {
        file.problems.insert(
            0,
            "the file contains NUL bytes: not a graph text file?".into(),
        );
    } else if text.lossy {
        file.problems.insert(
            0,
            "the file is not valid UTF-8; bad bytes shown as �".into(),
        );
    }
    Ok(file)
}

/// Walks `root` and builds its index, with capture JSON joined to models by `graph_K`.
pub fn index(root: &Path) -> Result<DebugIndex> {
    let mut index = discover::discover(root)?;
    join_captures(&mut index);
    Ok(index)
}

/// Joins captures to models by reading each `output_code.py` (small, and only those).
pub fn join_captures(index: &mut DebugIndex) {
    discover::join_captures(index, |p| {
        read::read_text(p)
            .ok()
            .and_then(|t| output_code::fx_graph_name(&t.text))
    });
}

/// Reads Inductor's provenance JSON (`inductor_provenance_tracking_node_mappings.json`). A
/// file that is not a JSON object is a user error naming the file.
pub fn provenance(path: &Path) -> Result<crate::model::compile::Provenance> {
    let text = read::read_text(path)?;
    crate::model::compile::Provenance::parse(&text.text).ok_or_else(|| {
        crate::error::Error::user(format!(
            "{}: not Inductor's provenance (a JSON object)",
            path.display()
        ))
    })
}
