//! Reading and parsing whole artifacts from disk, the one place that joins `read` and the
//! text parsers so the CLI, the app's background jobs and benchmarks load files the same way.

use crate::error::Result;
use crate::model::fx::FxFile;
use crate::sources::{fx_text, output_code, read};
use std::path::Path;

/// Reads and parses one FX graph file. Only I/O failures are errors: whatever text is there
/// parses into something (unparsed lines and problems are inside the result).
pub fn graph(path: &Path) -> Result<FxFile> {
    Ok(graph_of_text(read::read_text(path)?))
}

/// A graph file's text, already read, parsed (its problems say when it was not clean text).
pub fn graph_of_text(text: read::TextFile) -> FxFile {
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
    file
}

/// A graph file's interface (its outer `forward`'s parameters and returned values) without
/// parsing its body; `None` when it cannot be read.
pub fn interface(path: &Path) -> Option<crate::model::fx::GraphInterface> {
    read::read_text(path)
        .ok()
        .map(|t| fx_text::interface(&t.text))
}

/// The `fx_graph_name` an `output_code.py` names; `None` when it names none or cannot be read.
pub fn graph_name(path: &Path) -> Option<String> {
    read::read_text(path)
        .ok()
        .and_then(|t| output_code::fx_graph_name(&t.text))
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
