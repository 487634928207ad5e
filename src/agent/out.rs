//! Where the agent's answers go: one writer shared by every worker and stream.

use crate::sources::remote::proto::{Answer, Reply};
use crate::sources::remote::wire;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Where answers go: one writer, shared by every worker (a frame is written whole under it).
#[derive(Clone)]
pub(super) struct Out(pub(super) Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    pub(super) fn send(&self, id: u64, reply: Reply, payload: &[u8]) {
        let mut w = self.0.lock().expect("agent output");
        // A write that fails means the client is gone; the read loop ends on its own.
        if wire::write_frame(&mut *w, &Answer { id, reply }, payload).is_ok() {
            let _ = w.flush();
        }
    }
}
