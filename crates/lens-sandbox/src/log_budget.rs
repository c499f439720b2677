//! How much each conversation's sandbox may make the server log: a few lines a minute,
//! then a count. Every line a sandbox can cause (a refused connection, its agent dying
//! again and again) asks here first, so no program can fill the server's disk through
//! its log.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// Log lines one conversation's sandbox may cause per [`BUDGET_WINDOW`]; past it they
/// are counted, and the count is logged once the window ends.
const LINES_PER_WINDOW: u32 = 5;
const BUDGET_WINDOW: Duration = Duration::from_secs(60);

/// Budgets kept at most; older windows are forgotten past it.
const KEPT: usize = 1000;

/// The budgets of every conversation.
#[derive(Debug, Default)]
pub struct LogBudgets {
    budgets: Mutex<HashMap<String, LogBudget>>,
}

/// One conversation's log lines in the current window.
#[derive(Debug)]
struct LogBudget {
    since: Instant,
    lines: u32,
    held_back: u64,
}

impl LogBudgets {
    /// Whether a line the conversation's sandbox causes may go to the log now. A few a
    /// minute do; the rest are counted, and the count is logged when the minute is over.
    pub fn may_log(&self, chat_id: &str) -> bool {
        let Ok(mut budgets) = self.budgets.lock() else { return false };
        let now = Instant::now();
        if budgets.len() > KEPT {
            budgets.retain(|_, b| now.duration_since(b.since) < BUDGET_WINDOW);
        }
        let budget = budgets.entry(chat_id.to_owned()).or_insert(LogBudget { since: now, lines: 0, held_back: 0 });
        if now.duration_since(budget.since) >= BUDGET_WINDOW {
            if budget.held_back > 0 {
                tracing::warn!(
                    chat = %chat_id,
                    held_back = budget.held_back,
                    "a sandbox caused more log lines than it may; these were counted, not logged (its egress record \
                     counts each decision)"
                );
            }
            *budget = LogBudget { since: now, lines: 0, held_back: 0 };
        }
        if budget.lines < LINES_PER_WINDOW {
            budget.lines += 1;
            true
        } else {
            budget.held_back += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_lines_a_minute_per_conversation() {
        let budgets = LogBudgets::default();
        let allowed = (0..100).filter(|_| budgets.may_log("a")).count();
        assert_eq!(allowed, LINES_PER_WINDOW as usize);
        assert!(budgets.may_log("b"), "another conversation has its own budget");
    }
}
