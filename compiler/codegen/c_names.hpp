// Unique, readable C identifiers for the objects of a kernel (variables, fields, arrays), shared
// by the pass that names the parameters and the printers that name the locals around them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loom::ir {

class CNames {
public:
    /// A valid identifier close to `hint`, used by nothing named so far: a C or C++ keyword, a
    /// name loom's preludes or CUDA declare, or a name a header may define as a macro gets a
    /// trailing `_`; a taken name gets a suffix _1, _2, ...
    std::string unique(const std::string& hint);
    /// The name of `key`: unique(hint) the first time, the same name after.
    std::string name_of(const void* key, const std::string& hint);
    /// The name given to `key`, or "" if none was.
    std::string find(const void* key) const;

    /// Scopes, as in C: the names given after mark() are freed by release(mark), when the block
    /// that declared them ends, so a sibling block may use them again (`k` in every staging
    /// loop rather than k, k_1, k_2).
    std::size_t mark() const { return order_.size(); }
    void release(std::size_t mark);

private:
    std::vector<const void*> order_; ///< the keys in the order they were named
    std::map<const void*, std::string> names_;
    std::set<std::string> used_;
    std::map<std::string, int> next_suffix_; ///< per base name: the last suffix tried
};

} // namespace loom::ir
