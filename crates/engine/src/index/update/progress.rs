//! The progress of the batch being applied, as `GET /batches` shows it: which op of how
//! many, and within it the current step and how many documents it has done.

use serde_json::json;

use super::batch::Batch;

/// Progress of the batch being applied, for `GET /batches`.
#[derive(Default, Clone)]
pub(in crate::index) struct Progress {
    pub(super) op: usize,
    pub(super) ops: usize,
    pub(super) step: &'static str,
    pub(super) done: u64,
    pub(super) total: u64,
}

impl Batch<'_, '_> {
    /// Changes the running batch's progress (none while a batch runs outside
    /// [`crate::Index::apply_batch`], as a rebuild at open does).
    pub(super) fn set_progress(&self, f: impl FnOnce(&mut Progress)) {
        if let Some(p) = self.index.progress.lock().unwrap().as_mut() {
            f(p);
        }
    }
}

impl Progress {
    /// `{"steps":[...],"percentage":p}`.
    pub(super) fn json(&self) -> String {
        let p = self;
        let op_fraction = if p.total > 0 {
            p.done as f64 / p.total as f64
        } else {
            0.0
        };
        let percentage = if p.ops == 0 {
            0.0
        } else {
            (p.op as f64 + op_fraction) / p.ops as f64 * 100.0
        };
        let mut steps =
            vec![json!({"currentStep": "processing tasks", "finished": p.op, "total": p.ops})];
        if p.total > 0 {
            steps.push(json!({"currentStep": p.step, "finished": p.done, "total": p.total}));
        } else {
            steps.push(json!({"currentStep": p.step, "finished": 0, "total": 1}));
        }
        json!({"steps": steps, "percentage": (percentage * 1000.0).round() / 1000.0}).to_string()
    }
}
