// tile, tril/triu and einsum (include/ember/shape_ops.h).
#include "ember/shape_ops.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "ember/support/shape_str.h"

namespace ember {

Tensor tile(const Tensor& self, IntList reps) {
  for (int64_t r : reps)
    if (r < 0)
      throw ValueError("tile: repeats must be non-negative, got " + support::shape_str(reps));
  const size_t rank = std::max<size_t>(reps.size(), static_cast<size_t>(self.dim()));
  reps.insert(reps.begin(), rank - reps.size(), 1);
  Shape s = self.shape();
  s.insert(s.begin(), rank - s.size(), 1);
  // [S_1..S_n] -> [1, S_1, 1, S_2, ...] -> expanded [r_1, S_1, ...] -> [r_1 S_1, ...].
  Shape split, big, merged;
  for (size_t i = 0; i < rank; i++) {
    split.insert(split.end(), {1, s[i]});
    big.insert(big.end(), {reps[i], s[i]});
    merged.push_back(reps[i] * s[i]);
  }
  return self.reshape(split).expand(big).reshape(merged);
}

namespace {
Tensor triangle(const Tensor& self, int64_t k, bool lower, const char* name) {
  if (self.dim() < 2)
    throw ShapeError(std::string(name) + ": input must have at least 2 dims, got " +
                     support::shape_str(self.sizes()));
  const int64_t rows = self.size(-2), cols = self.size(-1);
  Tensor off = arange(cols) - arange(rows).unsqueeze(-1);  // j - i
  Tensor keep = lower ? off <= k : off >= k;
  return where(keep, self, zeros({}, self.dtype()));
}
}  // namespace

Tensor tril(const Tensor& self, int64_t k) { return triangle(self, k, true, "tril"); }
Tensor triu(const Tensor& self, int64_t k) { return triangle(self, k, false, "triu"); }

// ---- einsum ---------------------------------------------------------------------------------
namespace {

// An operand as letters (one per dim; broadcast dims as the characters '0', '1', ...).
struct Term {
  Tensor t;
  std::string letters;
};

[[noreturn]] void bad(const std::string& eq, const std::string& why) {
  throw ValueError("einsum '" + eq + "': " + why);
}

// Expands "..." to the broadcast letters '0'.. for a tensor of `rank` dims (right-aligned).
std::string expand_ellipsis(const std::string& s, int64_t rank, int64_t ell,
                            const std::string& eq) {
  const size_t at = s.find("...");
  const int64_t named = static_cast<int64_t>(s.size()) - (at == std::string::npos ? 0 : 3);
  if (at == std::string::npos) {
    if (named != rank)
      bad(eq, "'" + s + "' names " + std::to_string(named) + " dims of a " + std::to_string(rank) +
                  "-d operand");
    return s;
  }
  if (rank < named) bad(eq, "'" + s + "' names more dims than the operand has");
  std::string b;
  for (int64_t i = ell - (rank - named); i < ell; i++) b += static_cast<char>('0' + i);
  return s.substr(0, at) + b + s.substr(at + 3);
}

// Sums away the second and later occurrences of a letter repeated inside one term (a diagonal).
Term diagonals(Term x) {
  for (size_t i = 0; i < x.letters.size(); i++)
    for (size_t j = i + 1; j < x.letters.size();) {
      if (x.letters[j] != x.letters[i]) {
        j++;
        continue;
      }
      const int64_t n = x.t.size(static_cast<int64_t>(i));
      Shape s(x.letters.size(), 1);
      s[i] = n, s[j] = n;
      x.t = (x.t * eye(n, TensorOptions(x.t.dtype())).reshape(s))
                .sum({static_cast<int64_t>(j)}, false, x.t.dtype());
      x.letters.erase(j, 1);
    }
  return x;
}

// Sums the letters of x that neither `keep` nor any other operand needs.
Term sum_unneeded(Term x, const std::string& keep) {
  std::vector<int64_t> dims;
  std::string rest;
  for (size_t i = 0; i < x.letters.size(); i++)
    if (keep.find(x.letters[i]) == std::string::npos)
      dims.push_back(static_cast<int64_t>(i));
    else
      rest += x.letters[i];
  if (!dims.empty()) x.t = x.t.sum(dims, false, x.t.dtype());
  x.letters = rest;
  return x;
}

// a and b contracted over their shared letters that `keep` lacks, as one batched product.
Term contract(const Term& a, const Term& b, const std::string& keep) {
  std::string batch, left, right, inner;
  for (char c : a.letters) {
    const bool in_b = b.letters.find(c) != std::string::npos;
    if (in_b && keep.find(c) != std::string::npos)
      batch += c;
    else if (in_b)
      inner += c;
    else
      left += c;
  }
  for (char c : b.letters)
    if (a.letters.find(c) == std::string::npos) right += c;
  auto arrange = [](const Term& x, const std::string& order) {
    std::vector<int64_t> perm;
    for (char c : order) perm.push_back(static_cast<int64_t>(x.letters.find(c)));
    return x.t.permute(perm);
  };
  auto size_of = [&](const std::string& ls) {
    Shape s;
    for (char c : ls) {
      const size_t ia = a.letters.find(c), ib = b.letters.find(c);
      const int64_t na = ia == std::string::npos ? 1 : a.t.size(static_cast<int64_t>(ia));
      const int64_t nb = ib == std::string::npos ? 1 : b.t.size(static_cast<int64_t>(ib));
      if (na != nb && na != 1 && nb != 1)
        throw ShapeError(std::string("einsum: letter '") + c + "' has sizes " + std::to_string(na) +
                         " and " + std::to_string(nb));
      s.push_back(std::max(na, nb));
    }
    return s;
  };
  auto numel = [](const Shape& s) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
  };
  const Shape sb = size_of(batch), sl = size_of(left), sr = size_of(right), si = size_of(inner);
  // Batch dims broadcast (a letter of size 1 in one operand): expand both to the full batch.
  auto full = [&](const Term& x, const std::string& order, const Shape& shape) {
    Tensor t = arrange(x, order);
    return t.expand(shape);
  };
  Shape sa = sb, sbb = sb;
  sa.insert(sa.end(), sl.begin(), sl.end());
  sa.insert(sa.end(), si.begin(), si.end());
  sbb.insert(sbb.end(), si.begin(), si.end());
  sbb.insert(sbb.end(), sr.begin(), sr.end());
  Tensor ta = full(a, batch + left + inner, sa).reshape({numel(sb), numel(sl), numel(si)});
  Tensor tb = full(b, batch + inner + right, sbb).reshape({numel(sb), numel(si), numel(sr)});
  Shape out = sb;
  out.insert(out.end(), sl.begin(), sl.end());
  out.insert(out.end(), sr.begin(), sr.end());
  return {ta.matmul(tb).reshape(out), batch + left + right};
}

}  // namespace

Tensor einsum(const std::string& eq_in, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : eq_in)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> specs;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (specs.size() != operands.size())
    bad(eq_in, std::to_string(specs.size()) + " operand specs for " +
                   std::to_string(operands.size()) + " operands");
  int64_t ell = 0;  // broadcast dims: the most any operand's "..." stands for
  for (size_t i = 0; i < specs.size(); i++) {
    for (size_t k = 0; k < specs[i].size(); k++) {
      const char c = specs[i][k];
      if (c == '.' && specs[i].compare(k, 3, "...") == 0) {
        ell =
            std::max<int64_t>(ell, operands[i].dim() - (static_cast<int64_t>(specs[i].size()) - 3));
        k += 2;
      } else if (!std::isalpha(static_cast<unsigned char>(c))) {
        bad(eq_in, std::string("unexpected character '") + c + "'");
      }
    }
  }
  if (ell > 10) bad(eq_in, "more than 10 broadcast dims");
  std::vector<Term> terms;
  std::map<char, int> count;
  for (size_t i = 0; i < specs.size(); i++) {
    Term t{operands[i], expand_ellipsis(specs[i], operands[i].dim(), ell, eq_in)};
    for (char c : t.letters) count[c]++;
    terms.push_back(diagonals(t));
  }
  std::string out;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    out = rhs.find("...") == std::string::npos
              ? rhs
              : expand_ellipsis(rhs, static_cast<int64_t>(rhs.size()) - 3 + ell, ell, eq_in);
    for (char c : out)
      if (!count.count(c) || std::count(out.begin(), out.end(), c) > 1)
        bad(eq_in, std::string("output letter '") + c + "' is repeated or not an input letter");
  } else {
    for (int64_t i = 0; i < ell; i++) out += static_cast<char>('0' + i);
    for (auto& [c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  // Left to right: a letter stays while the output or a later operand needs it.
  auto needed_after = [&](size_t i) {
    std::string k = out;
    for (size_t j = i + 1; j < terms.size(); j++) k += terms[j].letters;
    return k;
  };
  Term acc = sum_unneeded(terms[0], needed_after(0));
  for (size_t i = 1; i < terms.size(); i++) {
    const std::string keep = needed_after(i);
    acc = contract(acc, sum_unneeded(terms[i], keep + acc.letters), keep);
    acc = sum_unneeded(acc, keep);
  }
  acc = sum_unneeded(acc, out);
  // Letters of the output that no operand kept as its own dim (size-1 broadcast) are absent only
  // when the output names a letter summed away: not possible, checked above.
  std::vector<int64_t> perm;
  for (char c : out) perm.push_back(static_cast<int64_t>(acc.letters.find(c)));
  return acc.t.permute(perm);
}

}  // namespace ember
