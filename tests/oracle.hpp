// The PyTorch oracle for kiln's tests: tests/oracle/cases.json, computed with autograd in float64 from the
// functions in tests/oracle/generate.py, and the C++ mirror of each of those functions on kiln operations.
// Used by tests/test_oracle_forward.cpp (values) and tests/test_oracle_grad.cpp (gradients).
//
// The file is KILN_ORACLE_JSON, defined for those targets in tests/CMakeLists.txt as
// ${PROJECT_SOURCE_DIR}/tests/oracle/cases.json. Regenerate it with
// `python3 tests/oracle/generate.py > tests/oracle/cases.json` (Debian's python3-torch).
// A missing or unreadable file FAILS every test that needs it, with the path in the message: it never skips.
//
// Notes on the mirrors (at the end of this file):
// - Broadcasting in kiln is decided by static extents only, so the 1 x n biases of mlp_mse are passed as
//   Eigen::RowVectorXd (or fixed 1 x n): a MatrixXd that is 1 x 8 at run time must match exactly.
// - log1p(t) is written log(1 + t), logsumexp along rows as log(sum(exp(x), axis<1>)) (the inputs are in
//   [-3, 3]), x ** 2 as x * x; generate.py uses PyTorch's own formulations (softplus, log_softmax,
//   Normal.log_prob, matrix_norm), so the two round differently, by a few ulps.
// - normal_logpdf's 0.5 * log(2 pi) is the correctly rounded constant.
// - pose_residual builds the skew matrix with kiln::at and kiln::matrix<3, 3>, as generate.py stacks k[i]; its
//   0 * k[0] entries are the constant 0 (the same value, and the same derivative, 0: k is finite).
#ifndef KILN_TESTS_ORACLE_HPP
#define KILN_TESTS_ORACLE_HPP

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#ifndef KILN_ORACLE_JSON
#error "KILN_ORACLE_JSON must be the path of tests/oracle/cases.json (tests/CMakeLists.txt defines it)"
#endif

namespace kiln_oracle {

// ---------------------------------------------------------------------------------------------------
// A small JSON reader: objects, arrays, numbers, strings, true/false/null. Enough for cases.json.
// ---------------------------------------------------------------------------------------------------
struct Json {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;        // the elements of an array, or the values of an object
    std::vector<std::string> keys;  // the keys of an object, parallel to items

    Json const* find(std::string_view key) const {
        if (kind != Kind::object) return nullptr;
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == key) return &items[i];
        return nullptr;
    }
    Json const& at(std::string_view key) const {
        if (Json const* v = find(key)) return *v;
        throw std::runtime_error("oracle JSON: no member \"" + std::string(key) + "\"");
    }
};

class JsonParser {
public:
    explicit JsonParser(std::string_view text) : s_(text) {}

    Json parse_document() {
        Json v = parse_value(0);
        skip_ws();
        if (pos_ != s_.size()) fail("trailing characters after the document");
        return v;
    }

private:
    std::string_view s_;
    std::size_t pos_ = 0;

    [[noreturn]] void fail(std::string const& what) const {
        throw std::runtime_error("oracle JSON: " + what + " at offset " + std::to_string(pos_));
    }
    void skip_ws() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    void literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
        pos_ += word.size();
    }

    Json parse_value(int depth) {
        if (depth > 64) fail("nesting too deep");
        skip_ws();
        Json v;
        switch (peek()) {
            case '{':
                v.kind = Json::Kind::object;
                ++pos_;
                skip_ws();
                if (peek() == '}') {
                    ++pos_;
                    return v;
                }
                for (;;) {
                    skip_ws();
                    v.keys.push_back(parse_string());
                    skip_ws();
                    expect(':');
                    v.items.push_back(parse_value(depth + 1));
                    skip_ws();
                    if (peek() == ',') {
                        ++pos_;
                        continue;
                    }
                    expect('}');
                    return v;
                }
            case '[':
                v.kind = Json::Kind::array;
                ++pos_;
                skip_ws();
                if (peek() == ']') {
                    ++pos_;
                    return v;
                }
                for (;;) {
                    v.items.push_back(parse_value(depth + 1));
                    skip_ws();
                    if (peek() == ',') {
                        ++pos_;
                        continue;
                    }
                    expect(']');
                    return v;
                }
            case '"':
                v.kind = Json::Kind::string;
                v.text = parse_string();
                return v;
            case 't':
                literal("true");
                v.kind = Json::Kind::boolean;
                v.boolean = true;
                return v;
            case 'f':
                literal("false");
                v.kind = Json::Kind::boolean;
                return v;
            case 'n':
                literal("null");
                return v;
            default:
                v.kind = Json::Kind::number;
                v.number = parse_number();
                return v;
        }
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    unsigned parse_hex4() {
        if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
        unsigned cp = 0;
        auto const r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_ + 4) fail("invalid \\u escape");
        pos_ += 4;
        return cp;
    }

    std::string parse_string() {
        expect('"');
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            char const c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            switch (char const e = s_[pos_++]) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = parse_hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
                        pos_ += 2;
                        unsigned const low = parse_hex4();
                        if (low < 0xDC00 || low >= 0xE000) fail("invalid surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail(std::string("invalid escape '\\") + e + "'");
            }
        }
    }

    // JSON's number grammar, then std::from_chars: exact and independent of the locale.
    double parse_number() {
        std::size_t const start = pos_;
        auto digits = [&] {
            std::size_t const from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == from) fail("invalid number");
        };
        if (peek() == '-') ++pos_;
        digits();
        if (peek() == '.') {
            ++pos_;
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            digits();
        }
        double value = 0;
        auto const r = std::from_chars(s_.data() + start, s_.data() + pos_, value);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_) fail("number out of range");
        return value;
    }
};

// ---------------------------------------------------------------------------------------------------
// The oracle file, read once. Any problem becomes a failure of each test that needs it (never a skip).
// ---------------------------------------------------------------------------------------------------
struct Oracle {
    Json root;
    std::string error;  // empty when the file was read and has a "cases" object
};

inline Oracle const& oracle() {
    static Oracle const o = [] {
        Oracle r;
        std::string const path = KILN_ORACLE_JSON;
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            r.error = "cannot open the oracle " + path +
                      " (KILN_ORACLE_JSON, from tests/CMakeLists.txt). Regenerate it with "
                      "python3 tests/oracle/generate.py > tests/oracle/cases.json.";
            return r;
        }
        std::ostringstream buffer;
        buffer << in.rdbuf();
        try {
            r.root = JsonParser(buffer.str()).parse_document();
            if (r.root.at("cases").kind != Json::Kind::object) throw std::runtime_error("\"cases\" is not an object");
        } catch (std::exception const& e) {
            r.error = "cannot read the oracle " + path + ": " + e.what();
        }
        return r;
    }();
    return o;
}

// The case `name`, or nullptr after a failure that says why.
inline Json const* oracle_case(std::string_view name) {
    Oracle const& o = oracle();
    if (!o.error.empty()) {
        ADD_FAILURE() << o.error;
        return nullptr;
    }
    Json const* c = o.root.at("cases").find(name);
    if (c == nullptr) ADD_FAILURE() << "the oracle " KILN_ORACLE_JSON " has no case \"" << name << "\"";
    return c;
}

// Every case of the oracle is either in `mirrored` (checked by the calling test) or in `skipped` (listed,
// with the reason, at the top of its file), and every mirrored case is in the oracle: a new oracle case
// fails this until a test mirrors it.
inline void expect_every_case_classified(std::vector<std::string> const& mirrored,
                                         std::vector<std::string> const& skipped) {
    Oracle const& o = oracle();
    ASSERT_TRUE(o.error.empty()) << o.error;
    Json const& cases = o.root.at("cases");
    for (std::string const& name : cases.keys) {
        bool const known = std::find(mirrored.begin(), mirrored.end(), name) != mirrored.end() ||
                           std::find(skipped.begin(), skipped.end(), name) != skipped.end();
        EXPECT_TRUE(known) << "oracle case \"" << name << "\" is neither mirrored nor listed as skipped";
    }
    for (std::string const& name : mirrored) EXPECT_NE(cases.find(name), nullptr) << name;
}

inline double expected_output(Json const& c) {
    Json const& v = c.at("output");
    if (v.kind != Json::Kind::number) throw std::runtime_error("oracle JSON: \"output\" is not a number");
    return v.number;
}

// An input or a gradient: row-major data with its shape ([] a scalar, [n] a vector, [r, c] a matrix).
struct Tensor {
    std::string name;  // what the messages call it: "input x", "gradient x"
    std::vector<long> shape;
    std::vector<double> data;

    // shape [n] is an n x 1 column, shape [] is 1 x 1
    long rows() const { return shape.empty() ? 1 : shape[0]; }
    long cols() const { return shape.size() < 2 ? 1 : shape[1]; }
    // element (i, j) of the row-major data
    double operator()(long i, long j) const { return data[static_cast<std::size_t>(i * cols() + j)]; }

    void require_shape(std::vector<long> const& expected) const {
        if (shape != expected) {
            std::ostringstream msg;
            msg << "oracle " << name << " has shape [";
            for (std::size_t i = 0; i < shape.size(); ++i) msg << (i ? "," : "") << shape[i];
            msg << "], not the one its C++ mirror expects";
            throw std::runtime_error(msg.str());
        }
    }
};

// The tensor {"shape": [...], "data": [...]} v, called `name` in messages.
inline Tensor tensor(Json const& v, std::string const& name) {
    Tensor t;
    t.name = name;
    for (Json const& d : v.at("shape").items) {
        if (d.kind != Json::Kind::number || d.number < 0 || d.number != std::floor(d.number))
            throw std::runtime_error("oracle " + name + ": bad shape");
        t.shape.push_back(static_cast<long>(d.number));
    }
    if (t.shape.size() > 2) throw std::runtime_error("oracle " + name + ": rank above 2");
    for (Json const& d : v.at("data").items) {
        if (d.kind != Json::Kind::number) throw std::runtime_error("oracle " + name + ": non-numeric data");
        t.data.push_back(d.number);
    }
    if (static_cast<long>(t.data.size()) != t.rows() * t.cols())
        throw std::runtime_error("oracle " + name + ": data does not match the shape");
    return t;
}

inline Tensor input(Json const& c, std::string const& name) { return tensor(c.at("inputs").at(name), "input " + name); }

// The gradient of the case's output with respect to input `name` (zeros where the output does not use it).
inline Tensor expected_gradient(Json const& c, std::string const& name) {
    return tensor(c.at("grad").at(name), "gradient " + name);
}

// A static input that is a plain JSON integer (scalar_args' n).
inline int integer_input(Json const& c, std::string const& name) {
    Json const& v = c.at("inputs").at(name);
    if (v.kind != Json::Kind::number || v.number != std::floor(v.number))
        throw std::runtime_error("oracle input " + name + " is not an integer");
    return static_cast<int>(v.number);
}

// shape [] -> double
inline double scalar(Tensor const& t) {
    t.require_shape({});
    return t.data[0];
}

// shape [r, c] -> MatrixXd filled row-major; shape [n] -> n x 1
inline Eigen::MatrixXd matrix(Tensor const& t) {
    if (t.shape.empty()) throw std::runtime_error("oracle " + t.name + " is a scalar, not a matrix");
    Eigen::MatrixXd m(t.rows(), t.cols());
    for (long i = 0; i < t.rows(); ++i)
        for (long j = 0; j < t.cols(); ++j) m(i, j) = t(i, j);
    return m;
}

// shape [n] or [n, 1] -> VectorXd (n x 1, statically one column)
inline Eigen::VectorXd column_vector(Tensor const& t) {
    if (t.shape.empty() || t.cols() != 1) throw std::runtime_error("oracle " + t.name + " is not a column");
    return Eigen::Map<Eigen::VectorXd const>(t.data.data(), t.rows());
}

// shape [1, n] -> RowVectorXd (1 x n, statically one row: it broadcasts over rows)
inline Eigen::RowVectorXd row_vector(Tensor const& t) {
    if (t.shape.size() != 2 || t.rows() != 1) throw std::runtime_error("oracle " + t.name + " is not 1 x n");
    return Eigen::Map<Eigen::RowVectorXd const>(t.data.data(), t.cols());
}

// shape [R, C] (or [R] when C is 1) -> a fixed-size matrix
template <int R, int C>
Eigen::Matrix<double, R, C> fixed(Tensor const& t) {
    if (t.shape.empty() || t.rows() != R || t.cols() != C)
        throw std::runtime_error("oracle " + t.name + " is not " + std::to_string(R) + " x " + std::to_string(C));
    Eigen::Matrix<double, R, C> m;
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) m(i, j) = t(i, j);
    return m;
}

// A row-major view of the oracle's own buffer: no copy.
using RowMajorMap = Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const>;
inline RowMajorMap row_major_map(Tensor const& t) {
    if (t.shape.empty()) throw std::runtime_error("oracle " + t.name + " is a scalar, not a matrix");
    return RowMajorMap(t.data.data(), t.rows(), t.cols());
}

// ---------------------------------------------------------------------------------------------------
// The mirrors of generate.py, one generic function each, in the order of generate.py.
// ---------------------------------------------------------------------------------------------------

// torch.sum(torch.sin(x) * y + torch.exp(-x * x))
inline constexpr auto elementwise_chain = [](auto const& x, auto const& y) {
    return kiln::sum(kiln::sin(x) * y + kiln::exp(-x * x));
};

// torch.sum(torch.logsumexp(x, dim=1))
inline constexpr auto logsumexp_rows = [](auto const& x) {
    return kiln::sum(kiln::log(kiln::sum(kiln::exp(x), kiln::axis<1>)));
};

// torch.mean(-torch.sum(onehot * torch.log_softmax(logits, dim=1), dim=1))
inline constexpr auto softmax_xent = [](auto const& logits, auto const& onehot) {
    auto const lse = kiln::log(kiln::sum(kiln::exp(logits), kiln::axis<1>));  // m x 1, broadcast over columns
    auto const log_softmax = logits - lse;
    return kiln::mean(-kiln::sum(onehot * log_softmax, kiln::axis<1>));
};

// h = tanh(x @ w1 + b1); torch.mean((h @ w2 + b2 - t) ** 2)
inline constexpr auto mlp_mse = [](auto const& x, auto const& w1, auto const& b1, auto const& w2, auto const& b2,
                                   auto const& t) {
    auto const h = kiln::tanh(kiln::matmul(x, w1) + b1);
    auto const d = kiln::matmul(h, w2) + b2 - t;
    return kiln::mean(d * d);
};

// torch.mean(torch.log1p(torch.exp(-y * (x @ w + b))))
inline constexpr auto logistic = [](auto const& x, auto const& w, auto const& b, auto const& y) {
    return kiln::mean(kiln::log(kiln::c<1> + kiln::exp(-y * (kiln::matmul(x, w) + b))));
};

// z = (x - mu) / sigma; torch.sum(-0.5 * z * z - torch.log(sigma) - 0.5 * math.log(2 * math.pi))
inline constexpr auto normal_logpdf = [](auto const& x, auto const& mu, auto const& sigma) {
    auto const z = (x - mu) / sigma;
    return kiln::sum(kiln::c<-0.5> * z * z - kiln::log(sigma) - kiln::c<0.91893853320467274178032973640562>);
};

// torch.sum((a @ b) * c) + torch.sqrt(torch.sum((a.T @ a) ** 2))
inline constexpr auto matmul_frobenius = [](auto const& a, auto const& b, auto const& c) {
    auto const ata = kiln::matmul(kiln::transpose(a), a);
    return kiln::sum(kiln::matmul(a, b) * c) + kiln::sqrt(kiln::sum(ata * ata));
};

// torch.sum(torch.where(x > 0, x, 0.01 * x)) + torch.sum(torch.maximum(x, y))
inline constexpr auto leaky_relu_max = [](auto const& x, auto const& y) {
    return kiln::sum(kiln::where(x > kiln::c<0>, x, kiln::c<0.01> * x)) + kiln::sum(kiln::maximum(x, y));
};

// torch.sum((x - torch.mean(x, dim=0, keepdim=True)) ** 2)
inline constexpr auto column_center = [](auto const& x) {
    auto const d = x - kiln::mean(x, kiln::axis<0>);  // 1 x cols, broadcast over rows
    return kiln::sum(d * d);
};

// torch.sum(x * z); y is never used
inline constexpr auto unused_param = [](auto const& x, auto const& /*y*/, auto const& z) { return kiln::sum(x * z); };

// `Levels` times y = 0.5 * y * y + 0.25 * y: each level uses y three times, so the graph is a shared DAG
template <int Levels>
constexpr auto dag_levels(auto const& y) {
    if constexpr (Levels == 0) return y;
    else return dag_levels<Levels - 1>(kiln::c<0.5> * y * y + kiln::c<0.25> * y);
}
// torch.sum of 12 levels
inline constexpr auto shared_dag = [](auto const& x) { return kiln::sum(dag_levels<12>(x)); };

// torch.sum(alpha * x ** 2) * n; n an int (traced as i32: the product promotes to f64) or a kiln::static_arg
inline constexpr auto scalar_args = [](auto const& x, auto const& alpha, auto const& n) {
    return kiln::sum(alpha * (x * x)) * n;
};

// optional_bias_present / optional_bias_absent: torch.sum(torch.tanh(x + b)), or torch.sum(torch.tanh(x))
// when b is None. One function, two graphs: f receives kiln::none when b is an empty std::optional.
inline constexpr auto optional_bias = [](auto const& x, auto const& b) {
    if constexpr (kiln::is_none<decltype(b)>) return kiln::sum(kiln::tanh(x));
    else return kiln::sum(kiln::tanh(x + b));
};

// || R(w) p + t - q ||^2 with R from the axis-angle w (Rodrigues): w, t, p, q 3-vectors
inline constexpr auto pose_residual = [](auto const& w, auto const& t, auto const& p, auto const& q) {
    auto const th = kiln::sqrt(kiln::sum(w * w));
    auto const k = w / th;
    auto const k0 = kiln::at<0>(k);
    auto const k1 = kiln::at<1>(k);
    auto const k2 = kiln::at<2>(k);
    auto const skew = kiln::matrix<3, 3>(kiln::c<0.0>, -k2, k1,
                                         k2, kiln::c<0.0>, -k0,
                                         -k1, k0, kiln::c<0.0>);
    auto const rot = kiln::eye<3>() + kiln::sin(th) * skew + (kiln::c<1> - kiln::cos(th)) * kiln::matmul(skew, skew);
    auto const r = kiln::matmul(rot, p) + t - q;
    return kiln::sum(r * r);
};

// torch.sum(atan(x) + asin(x) + acos(x) + sinh(x) cosh(x) + asinh(x) + atanh(x) + erf(x) erfc(x))
//   + torch.sum(acosh(u) + lgamma(u) u)
inline constexpr auto inverse_trig_hyperbolic = [](auto const& x, auto const& u) {
    return kiln::sum(kiln::atan(x) + kiln::asin(x) + kiln::acos(x) + kiln::sinh(x) * kiln::cosh(x) + kiln::asinh(x) +
                     kiln::atanh(x) + kiln::erf(x) * kiln::erfc(x)) +
           kiln::sum(kiln::acosh(u) + kiln::lgamma(u) * u);
};

// torch.sum(sign(x) x^2 + (floor(3x) + ceil(3x) + round(3x)) x + remainder(3x, y) y + atan2(x, y)
//   + clip(x, -0.5, 0.5))
inline constexpr auto rounding_mod_atan2 = [](auto const& x, auto const& y) {
    auto const x3 = kiln::c<3> * x;
    auto const s = kiln::sign(x) * kiln::square(x) + (kiln::floor(x3) + kiln::ceil(x3) + kiln::round(x3)) * x;
    return kiln::sum(s + kiln::mod(x3, y) * y + kiln::atan2(x, y) + kiln::clip(x, kiln::c<-0.5>, kiln::c<0.5>));
};

}  // namespace kiln_oracle

#endif
