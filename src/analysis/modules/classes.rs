//! Rule 12 (see the parent module): the modules torch's guards name, with their classes. A
//! weightless child called on a line that prints no node (`h = self.act(self.c_fc(x))`: the
//! Conv1D's and the activation's own lines print the nodes) leaves its name in no graph file,
//! and the earlier rules put its code in its caller. Dynamo guarded every module it read, by
//! path and class, and a class's Python module is the file its `forward` is in: a `forward` in
//! a file where only one child of the caller has its class, and the caller's own class has not,
//! is that child's.

use super::paths::{ModId, Paths};
use super::runs::is_helper;
use crate::model::compile::GuardedModule;
use crate::model::fx::SourceLoc;
use rustc_hash::FxHashMap as HashMap;

/// The guarded modules by path and by parent.
#[derive(Debug, Default)]
pub struct Classes {
    /// Each module's class: its index in `files`.
    class_of: HashMap<String, usize>,
    /// Each module's children: (name, class).
    children: HashMap<String, Vec<(String, usize)>>,
    /// Every class's file suffixes, by index.
    files: Vec<[String; 2]>,
}

impl Classes {
    pub fn new(modules: &[GuardedModule]) -> Classes {
        let mut c = Classes::default();
        let mut index: HashMap<&str, usize> = HashMap::default();
        for m in modules {
            let k = *index.entry(m.class.as_str()).or_insert_with(|| {
                c.files.push(files_of(&m.class));
                c.files.len() - 1
            });
            c.class_of.insert(m.path.clone(), k);
            if let Some((parent, name)) = split(&m.path) {
                c.children
                    .entry(parent.to_string())
                    .or_default()
                    .push((name.to_string(), k));
            }
        }
        c
    }

    /// The child of `f` whose `forward` the statement at `loc` runs, when the guards say so
    /// without doubt: `loc` is a `forward` in a file where exactly one child of `f` has its
    /// class, and `f`'s own class is not defined there (else the line may be `f`'s own).
    pub fn callee(&self, f: ModId, loc: &SourceLoc, paths: &mut Paths) -> Option<ModId> {
        if is_helper(loc) {
            return None;
        }
        let p = paths.path(f);
        let here = |k: usize| in_file(&self.files[k], &loc.file);
        if self.class_of.get(p).is_none_or(|&k| here(k)) {
            return None;
        }
        let mut hits = self.children.get(p)?.iter().filter(|(_, k)| here(*k));
        let (name, _) = hits.next()?;
        if hits.next().is_some() {
            return None;
        }
        let name = name.clone();
        Some(paths.child(f, &name))
    }
}

/// `h.0.mlp.act` → (`h.0.mlp`, `act`); `act` → (``, `act`); the root has no parent.
fn split(path: &str) -> Option<(&str, &str)> {
    if path.is_empty() {
        return None;
    }
    Some(path.rsplit_once('.').unwrap_or(("", path)))
}

/// The files a class's Python module is (`transformers.activations.NewGELUActivation` →
/// `transformers/activations.py` or `transformers/activations/__init__.py`), as path suffixes.
fn files_of(class: &str) -> [String; 2] {
    let module = class.rsplit_once('.').map_or("", |(m, _)| m);
    let rel = module.replace('.', "/");
    [format!("/{rel}.py"), format!("/{rel}/__init__.py")]
}

/// The file Python printed (`/opt/venv/…/transformers/activations.py`, either separator) is one
/// of `files`.
fn in_file(files: &[String; 2], file: &str) -> bool {
    let unix;
    let file = if file.contains('\\') {
        unix = file.replace('\\', "/");
        unix.as_str()
    } else {
        file
    };
    files
        .iter()
        .any(|f| file.ends_with(f.as_str()) || file == &f[1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(file: &str, function: &str) -> SourceLoc {
        SourceLoc {
            file: file.into(),
            line: 66,
            function: function.into(),
            code: "return 0.5 * input".into(),
            backward_of: false,
        }
    }

    fn guarded(list: &[(&str, &str)]) -> Classes {
        let modules: Vec<GuardedModule> = list
            .iter()
            .map(|&(path, class)| GuardedModule {
                path: path.into(),
                class: class.into(),
            })
            .collect();
        Classes::new(&modules)
    }

    const ACT: &str = "/opt/venv/lib/python3.11/site-packages/transformers/activations.py";

    #[test]
    fn the_one_child_whose_class_is_in_the_file() {
        let c = guarded(&[
            (
                "",
                "transformers.models.openai.modeling_openai.OpenAIGPTModel",
            ),
            ("h.0.mlp", "transformers.models.openai.modeling_openai.MLP"),
            ("h.0.mlp.c_fc", "transformers.pytorch_utils.Conv1D"),
            ("h.0.mlp.act", "transformers.activations.NewGELUActivation"),
            ("h.0.mlp.dropout", "torch.nn.modules.dropout.Dropout"),
        ]);
        let mut paths = Paths::default();
        let mlp = paths.intern("h.0.mlp");
        let act = c.callee(mlp, &loc(ACT, "forward"), &mut paths);
        assert_eq!(
            act.map(|a| paths.path(a).to_string()).as_deref(),
            Some("h.0.mlp.act")
        );
        // A helper is called, not a module: no child's.
        assert_eq!(c.callee(mlp, &loc(ACT, "gelu"), &mut paths), None);
        // Another file, or a module the guards do not name: nothing.
        let other = loc(
            "/x/transformers/models/openai/modeling_openai.py",
            "forward",
        );
        assert_eq!(c.callee(mlp, &other, &mut paths), None);
        let unknown = paths.intern("h.0.attn");
        assert_eq!(c.callee(unknown, &loc(ACT, "forward"), &mut paths), None);
    }

    #[test]
    fn unsure_when_two_children_or_the_caller_share_the_file() {
        let two = guarded(&[
            ("mlp", "m.Mlp"),
            ("mlp.act", "transformers.activations.GELU"),
            ("mlp.act2", "transformers.activations.GELU"),
        ]);
        let mut paths = Paths::default();
        let mlp = paths.intern("mlp");
        assert_eq!(two.callee(mlp, &loc(ACT, "forward"), &mut paths), None);
        // BLOOM's MLP and its `gelu_impl` are in one file: the line may be the MLP's own.
        let same = guarded(&[
            ("mlp", "transformers.activations.Mlp"),
            ("mlp.act", "transformers.activations.GELU"),
        ]);
        assert_eq!(same.callee(mlp, &loc(ACT, "forward"), &mut paths), None);
    }
}
