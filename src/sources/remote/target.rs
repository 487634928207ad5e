//! Where a remote tree is: `ssh://[user@]host[:port]/abs/path` as the user writes it, and the
//! path the rest of fxray uses for it, `/ssh:[user@]host[:port]/abs/path`.
//!
//! The mount is an ordinary absolute path so that every path operation of the crate (join,
//! parent, starts_with, the index's keys) works unchanged; only `sources::vfs` knows that
//! nothing under `/ssh:…` is on this disk.
//!
//! A mount made by an [`Owner`](super::Owner) other than the process names it after the
//! authority, `/ssh:host~3/abs/path`: what reads under it goes through that owner's link.

use std::path::{Path, PathBuf};

/// The first component of every remote path.
const PREFIX: &str = "ssh:";

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Host {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// Whose link reads this host's paths ([`super::Owner`]); 0: the process's own.
    pub owner: u64,
}

impl Host {
    /// `[user@]host[:port]`, the mount's name.
    pub fn authority(&self) -> String {
        let mut s = String::new();
        if let Some(u) = &self.user {
            s.push_str(u);
            s.push('@');
        }
        s.push_str(&self.host);
        if let Some(p) = self.port {
            s.push_str(&format!(":{p}"));
        }
        s
    }

    /// `[user@]host[:port]~owner`: the mount's name and its link's (the authority alone for
    /// the process's own links).
    pub fn mount_name(&self) -> String {
        match self.owner {
            0 => self.authority(),
            o => format!("{}~{o}", self.authority()),
        }
    }

    /// `[user@]host[:port]` back into a host of the process's links (the status bar names
    /// links by it).
    pub fn parse(authority: &str) -> Option<Host> {
        let (user, rest) = match authority.rsplit_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            Some(_) => return None,
            None => (None, authority),
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p.parse::<u16>().ok()?)),
            None => (rest, None),
        };
        let ok = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        if host.is_empty() || !host.chars().all(ok) || host.starts_with('-') {
            // A host starting with '-' would be read by ssh as an option.
            return None;
        }
        Some(Host {
            user,
            host: host.to_string(),
            port,
            owner: 0,
        })
    }
}

/// What went wrong with an `ssh://` address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0}: not a remote address; write ssh://[user@]host[:port]/absolute/path \
     (e.g. ssh://dev@npu-01/home/dev/torch_compile_debug)"
)]
pub struct BadAddress(pub String);

/// Parses `ssh://[user@]host[:port]/abs/path`; `None` when `text` is not an ssh address at all
/// (a local path), an error when it is one but malformed.
pub fn parse(text: &str) -> Option<Result<(Host, String), BadAddress>> {
    let rest = text.strip_prefix("ssh://")?;
    let bad = || BadAddress(text.to_string());
    let Some(slash) = rest.find('/') else {
        return Some(Err(bad()));
    };
    let (authority, path) = rest.split_at(slash);
    Some(
        Host::parse(authority)
            .map(|h| (h, path.to_string()))
            .ok_or_else(bad),
    )
}

/// The local mount path of a remote path.
pub fn mount_path(host: &Host, remote: &str) -> PathBuf {
    PathBuf::from(format!("/{PREFIX}{}{remote}", host.mount_name()))
}

/// `ssh://…` given as a path (from the command line, a recent entry) becomes its mount path;
/// any other path is returned as it is.
pub fn resolve(path: &Path) -> Result<PathBuf, BadAddress> {
    match path.to_str().and_then(parse) {
        None => Ok(path.to_path_buf()),
        Some(r) => r.map(|(h, p)| mount_path(&h, &p)),
    }
}

/// A path on a server: POSIX, `/` between components, whatever the client's OS. Servers
/// are Linux NPU hosts; a Windows client's `Path::join` puts `\` between the components it
/// adds to a mount path, and a server would read that as part of a file name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerPath(String);

impl ServerPath {
    /// The server part of a mount path as this client's path functions wrote it, `sep` being
    /// their separator (`std::path::MAIN_SEPARATOR`).
    pub fn from_client(text: &str, sep: char) -> ServerPath {
        if sep == '/' {
            ServerPath(text.to_string())
        } else {
            ServerPath(text.replace(sep, "/"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for ServerPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ServerPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The host and server path of a mount path; `None` for a local path.
pub fn split(path: &Path) -> Option<(Host, ServerPath)> {
    let text = path.to_str()?;
    let rest = text
        .strip_prefix(['/', std::path::MAIN_SEPARATOR])?
        .strip_prefix(PREFIX)?;
    let (name, remote) = match rest.find(['/', std::path::MAIN_SEPARATOR]) {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    // An authority ends with its host or port, neither of which holds a `~`: digits after the
    // last `~` are the owner (a `~` in a user name, `a~b@host`, is followed by more).
    let (authority, owner) = match name.rsplit_once('~') {
        Some((a, o)) if !o.is_empty() && o.bytes().all(|b| b.is_ascii_digit()) => {
            (a, o.parse::<u64>().ok()?)
        }
        _ => (name, 0),
    };
    Some((
        Host {
            owner,
            ..Host::parse(authority)?
        },
        ServerPath::from_client(remote, std::path::MAIN_SEPARATOR),
    ))
}

/// The server of a mount path; `None` for a local path.
pub fn host_of(path: &Path) -> Option<Host> {
    split(path).map(|(h, _)| h)
}

/// True for a path under an `/ssh:…` mount.
pub fn is_remote(path: &Path) -> bool {
    split(path).is_some()
}

/// The address a person reads: `ssh://host/abs/path` for a mount path, else the path.
pub fn display(path: &Path) -> String {
    match split(path) {
        Some((h, p)) => format!("ssh://{}{p}", h.authority()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a Windows client's `Path::join` makes of a mount path reaches the server with `/`
    /// only; on a `/` client a server path is taken as written.
    #[test]
    fn a_server_path_never_holds_a_client_separator() {
        let joined = r"/home/dev/run\model__0\forward\000_graph.txt";
        let p = ServerPath::from_client(joined, '\\');
        assert_eq!(p.as_str(), "/home/dev/run/model__0/forward/000_graph.txt");
        assert!(!p.contains('\\'));
        let mount = mount_path(&Host::parse("dev@npu-01").unwrap(), "/home/dev/run");
        let (_, here) = split(&mount.join("model__0").join("a.txt")).unwrap();
        assert_eq!(here.as_str(), "/home/dev/run/model__0/a.txt");
        assert!(!here.contains('\\'));
    }

    #[test]
    fn addresses_map_to_mounts_and_back() {
        let (h, p) = parse("ssh://dev@npu-01:2222/home/dev/run")
            .unwrap()
            .unwrap();
        assert_eq!(h.authority(), "dev@npu-01:2222");
        let m = mount_path(&h, &p);
        assert_eq!(m, PathBuf::from("/ssh:dev@npu-01:2222/home/dev/run"));
        assert_eq!(
            split(&m.join("a.txt")).unwrap().1.as_str(),
            "/home/dev/run/a.txt"
        );
        assert_eq!(display(&m), "ssh://dev@npu-01:2222/home/dev/run");
        assert_eq!(split(Path::new("/ssh:npu")).unwrap().1.as_str(), "/");
        // An owner's mount reads as the process's to a person, and keeps its owner.
        let own = Host { owner: 7, ..h };
        let m = mount_path(&own, &p);
        assert_eq!(m, PathBuf::from("/ssh:dev@npu-01:2222~7/home/dev/run"));
        assert_eq!(split(&m.join("a")).unwrap().0, own);
        assert_eq!(display(&m), "ssh://dev@npu-01:2222/home/dev/run");
        assert!(split(Path::new("/ssh:npu~x/a")).is_none());
        // A `~` in a user name is the user's.
        let (h, p) = split(Path::new("/ssh:a~b@npu/x")).unwrap();
        assert_eq!(
            (h.user.as_deref(), h.owner, p.as_str()),
            (Some("a~b"), 0, "/x")
        );
        let (h, _) = split(Path::new("/ssh:a~b@npu~4/x")).unwrap();
        assert_eq!((h.user.as_deref(), h.owner), (Some("a~b"), 4));
        assert!(!is_remote(Path::new("/home/dev/run")));
        assert!(parse("/home/dev").is_none());
    }

    #[test]
    fn malformed_addresses_say_how_to_write_them() {
        for bad in [
            "ssh://host",
            "ssh://-oProxyCommand=x/p",
            "ssh://h:99999/p",
            "ssh://@h/p",
        ] {
            let e = parse(bad).unwrap().unwrap_err();
            assert!(e.to_string().contains("ssh://[user@]host"), "{bad}: {e}");
        }
    }
}
