//! What the UI shows of work done in the background: nothing asked, under way, failed (why, in
//! one line) or ready. `ui::loading::show` draws it.

/// The state of one thing read or computed in the background.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Loading<T> {
    /// Nothing asked (yet).
    #[default]
    Idle,
    /// Being read or computed.
    Loading,
    /// Why it could not be made, in one line.
    Failed(String),
    Ready(T),
}

impl<T> Loading<T> {
    pub fn ready(&self) -> Option<&T> {
        match self {
            Loading::Ready(v) => Some(v),
            _ => None,
        }
    }

    pub fn error(&self) -> Option<&str> {
        match self {
            Loading::Failed(e) => Some(e),
            _ => None,
        }
    }

    pub fn is_loading(&self) -> bool {
        matches!(self, Loading::Loading)
    }
}

impl<T, E: std::fmt::Display> From<Result<T, E>> for Loading<T> {
    fn from(r: Result<T, E>) -> Self {
        match r {
            Ok(v) => Loading::Ready(v),
            Err(e) => Loading::Failed(e.to_string()),
        }
    }
}
