// Online softmax: a row's maximum and its sum of exponentials relative to that maximum in one
// loop, so that a row too long to stay on chip is read once for both instead of twice.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstdint>

namespace loom::ir {

/// exp(from - to) for from <= to, and 0 where `from` is -inf (a maximum's identity, or a term
/// that is -inf, as in a masked row): the factor by which a sum of exp(term - from) becomes a
/// sum of exp(term - to) when the running maximum grows from `from` to `to`. Spelled
/// `from == -inf ? 0 : exp(from - to)`, so that -inf - -inf never makes a NaN.
Expr online_rescale(const Expr& from, const Expr& to);

/// If `update` is the update of an online sum, `acc = term > m ? acc * scale + 1 + (term - next)
/// : acc + scale`
/// (as online_softmax writes it), the running maximum `m` it is rescaled with; else null.
const VarNode* rescaled_by(const Stmt& update, const Expr& acc);

/// In every list of statements (after lower_reductions), a sum of exp(E - m) over a range,
/// where m is the maximum of the same E over the same range computed earlier in the list
/// (softmax with its maximum subtracted, log-sum-exp):
///
///     let max_k = -inf                   let max_k = -inf
///     for k: max_k = max(max_k, E)       let sum_k = 0
///     let m = max_k               =>     for k: let max_k_term = E
///     ...                                       let max_k_next = max(max_k, max_k_term)
///     let sum_k = 0                             let max_k_scale = rescale(the smaller of
///     for k: sum_k = sum_k + exp(E - m)             max_k and max_k_term, max_k_next)
///                                               sum_k = max_k_term > max_k
///                                                   ? sum_k * max_k_scale + 1  // a new maximum
///                                                     + (max_k_term - max_k_next)  // NaN at +inf
///                                                   : sum_k + max_k_scale
///                                               max_k = max(max_k, max_k_term)
///                                        let m = max_k
///
/// with one exp per term, as in two passes (after Milakov and Gimelshein, "Online normalizer
/// calculation for softmax", 2018). Both loops hold nothing but their update, nothing between
/// changes what the maximum's terms read (a store to the row), and the row has at least
/// `min_row_bytes` bytes (terms times the element's size; a range that is not a constant always
/// qualifies). The warp and block reductions combine such a pair by the maximum first, then the
/// sums rescaled to it (block_reductions.hpp). `applied` says whether any pair was rewritten.
struct OnlineSoftmax {
    Stmt body;
    bool applied = false;
};
OnlineSoftmax online_softmax(const Stmt& body, std::int64_t min_row_bytes);

} // namespace loom::ir
