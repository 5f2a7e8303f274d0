//! Stage 7b, observe: read-only listeners of the frozen final result. They receive
//! `&FinalResult`, which has no mutating methods and no public fields.

use crate::result::FinalResult;

pub trait Observer: Send + Sync {
    fn observe(&self, result: &FinalResult);
}
