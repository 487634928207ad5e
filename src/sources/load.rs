//! Reading and parsing whole artifacts from disk, the one place that joins `read` and the
//! text parsers so the CLI, the app's background jobs and benchmarks load files the same way.

use crate::error::Result;
use crate::model::fx::FxFile;
use crate::model::index::DebugIndex;
use crate::sources::remote::fs as remote;
use crate::sources::{discover, fx_text, output_code, read};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

/// Walks `root` and builds its index, with capture JSON joined to models by `graph_K`.
pub fn index(root: &Path) -> Result<DebugIndex> {
    let mut index = discover::discover(root)?;
    join_captures(&mut index);
    Ok(index)
}

/// Joins captures to models by the `fx_graph_name` each `output_code.py` names. The files of a
/// tree on a server are read there, all in one request: only their names cross (a 415-layer
/// model's two files are 16 MB, read one after the other before its first graph).
pub fn join_captures(index: &mut DebugIndex) {
    let far = names_on_servers(index);
    discover::join_captures(index, |p| match far.get(p) {
        Some(name) => name.clone(),
        None => graph_name(p),
    });
}

/// The `fx_graph_name` an `output_code.py` names; `None` when it names none or cannot be read.
pub fn graph_name(path: &Path) -> Option<String> {
    read::read_text(path)
        .ok()
        .and_then(|t| output_code::fx_graph_name(&t.text))
}

/// The names of the index's `output_code.py` files that lie on servers, asked of each server
/// at once; a server that cannot answer leaves its files to be read one by one.
fn names_on_servers(index: &DebugIndex) -> HashMap<PathBuf, Option<String>> {
    let mut by_host: HashMap<remote::Host, Vec<(PathBuf, String)>> = HashMap::new();
    let codes = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .filter_map(|p| p.output_code.as_deref());
    for path in codes {
        if let Some((host, on_server)) = remote::locate(path) {
            by_host
                .entry(host)
                .or_default()
                .push((path.to_path_buf(), on_server.into_string()));
        }
    }
    let mut names = HashMap::new();
    for (host, files) in by_host {
        let asked: Vec<String> = files.iter().map(|(_, s)| s.clone()).collect();
        if let Ok(got) = remote::graph_names(&host, &asked) {
            names.extend(files.into_iter().map(|(p, _)| p).zip(got));
        }
    }
    names
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
