//! Per-file memos: lists worked out once per key, on first use, and kept for
//! the rest of the file's analysis.

use crate::hash::FastMap;
use std::cell::RefCell;
use std::rc::Rc;

/// Lists worked out once per key, on first use.
pub(crate) type Memo<K, V> = RefCell<FastMap<K, Rc<[V]>>>;

/// The list `memo` holds for `key`, or the one `find` works out (then kept).
pub(crate) fn memoised<K: std::hash::Hash + Eq, V>(
    memo: &Memo<K, V>,
    key: K,
    find: impl FnOnce() -> Vec<V>,
) -> Rc<[V]> {
    if let Some(found) = memo.borrow().get(&key) {
        return found.clone();
    }
    // `find` may fill other memos (comparisons read copies), never this one's key.
    let found: Rc<[V]> = find().into();
    memo.borrow_mut().insert(key, found.clone());
    found
}
