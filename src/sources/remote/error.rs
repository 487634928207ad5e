//! What can go wrong on a link, each in one line that says what to do.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    #[error("cannot run `{program}`: {reason}; set FXRAY_SSH to the ssh command to use")]
    Spawn { program: String, reason: String },
    #[error(
        "{host}: no fxray agent answered ({said}); install fxray there (`fxray agent \
         --print-install` says how) or give its path with --remote-fxray PATH"
    )]
    NoAgent { host: String, said: String },
    #[error(
        "{host}: its fxray {their_version} speaks protocol {theirs}, this fxray {} speaks {}: \
         install this fxray (version {}, protocol {}) on {host} (`fxray agent --print-install` \
         says how)",
        env!("CARGO_PKG_VERSION"),
        super::proto::PROTOCOL,
        env!("CARGO_PKG_VERSION"),
        super::proto::PROTOCOL
    )]
    Version {
        host: String,
        theirs: u32,
        their_version: String,
    },
    #[error("{host}: the link dropped; fxray reconnects on the next read")]
    Dropped { host: String },
    #[error("{host}: the agent answered out of turn ({what}); is it the same fxray version?")]
    Protocol { host: String, what: String },
    #[error("{host}: its link was closed by whoever opened it; open the tree again")]
    Closed { host: String },
}

impl RemoteError {
    /// An answer that is not one the request can have (an agent of another build).
    pub fn unexpected(host: &super::Host, reply: &super::proto::Reply) -> RemoteError {
        RemoteError::Protocol {
            host: host.authority(),
            what: format!("unexpected reply {reply:?}")
                .chars()
                .take(200)
                .collect(),
        }
    }

    /// As an I/O error, for the file door (`sources::vfs`), whose callers speak `io::Error`.
    pub fn into_io(self) -> std::io::Error {
        std::io::Error::other(self)
    }
}
