// hnsw.cpp — the hnswlib shim behind vec/hnsw.h.  Why C++: hnswlib is a C++ header library;
// everything here is wrapped so no exception or C++ type reaches the C code.
#include "vec/hnsw.h"

// hnswlib's SSE path prefetches one entry past a neighbour list (a harmless read the CPU
// tolerates, which AddressSanitizer reports): sanitized builds leave the prefetches out.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_MANUAL_VECTORIZATION 1
#endif
#endif
#include <hnswlib/hnswlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

typedef float (*og_vec_l2sq_fn)(const float *a, const float *b, size_t dim);
extern "C" og_vec_l2sq_fn og_vec_l2sq_kernel(void);

namespace {

// What hnswlib hands back to the distance function: the kernel resolved once (vec/distance.h
// og_vec_l2sq_kernel, so no dispatch per call) and the dimension.
struct L2Param {
    og_vec_l2sq_fn fn;
    size_t dim;
};

float l2sq(const void *a, const void *b, const void *param)
{
    const L2Param *p = static_cast<const L2Param *>(param);
    return p->fn(static_cast<const float *>(a), static_cast<const float *>(b), p->dim);
}

// Squared L2 through the project's dispatched SIMD kernels.
class OgL2 : public hnswlib::SpaceInterface<float> {
  public:
    explicit OgL2(size_t dim) : param_{og_vec_l2sq_kernel(), dim} {}
    size_t get_data_size() override { return param_.dim * sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return l2sq; }
    void *get_dist_func_param() override { return &param_; }

  private:
    L2Param param_;
};

// A file in memory (memfd) that hnswlib's path-based save/load can use.
struct MemFile {
    int fd = -1;
    std::string path;
    MemFile()
    {
        fd = memfd_create("og-hnsw", MFD_CLOEXEC);
        if (fd >= 0) path = "/proc/self/fd/" + std::to_string(fd);
    }
    ~MemFile()
    {
        if (fd >= 0) close(fd);
    }
};

// Reads a T at p[at] (hnswlib writes its header fields as raw host-order PODs).
template <typename T> bool take(const uint8_t *p, size_t len, size_t &at, T &v)
{
    if (at > len || len - at < sizeof v) return false;
    std::memcpy(&v, p + at, sizeof v);
    at += sizeof v;
    return true;
}

inline uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Whether p[0..len) is an hnswlib serialisation of a dim-float index that is safe to load and
// search: hnswlib's loader trusts every field (allocation sizes, neighbour ids, levels), so a
// damaged or hostile payload must be refused here, before it reaches hnswlib.  Checks: the
// header's layout fields against dim and M (as hnswlib computes them), allocation sizes bounded
// by the payload, every vector finite, every neighbour list within its bound with neighbours
// that exist (and reach the level they are linked at), the entry point at the top level, and
// the size exactly consumed.  *count = the number of points.
bool well_formed(const uint8_t *p, size_t len, uint32_t dim, size_t *count)
{
    size_t at = 0, off0, maxel, cur, sdpe, laboff, offdata, maxM, maxM0, M, efc;
    int maxlevel;
    unsigned int ep;
    double mult;
    if (!take(p, len, at, off0) || !take(p, len, at, maxel) || !take(p, len, at, cur) || !take(p, len, at, sdpe) ||
        !take(p, len, at, laboff) || !take(p, len, at, offdata) || !take(p, len, at, maxlevel) ||
        !take(p, len, at, ep) || !take(p, len, at, maxM) || !take(p, len, at, maxM0) || !take(p, len, at, M) ||
        !take(p, len, at, mult) || !take(p, len, at, efc))
        return false;
    if (off0 != 0 || M < 2 || M > 4096 || maxM != M || maxM0 != 2 * M || !(mult > 0) || !std::isfinite(mult)) return false;
    size_t links0 = maxM0 * sizeof(unsigned int) + sizeof(unsigned int), links = maxM * sizeof(unsigned int) + sizeof(unsigned int);
    if (dim > (SIZE_MAX - links0 - 8) / sizeof(float)) return false;
    size_t dbytes = (size_t)dim * sizeof(float);
    if (offdata != links0 || laboff != links0 + dbytes || sdpe != laboff + sizeof(size_t)) return false;
    *count = cur;
    if (cur == 0) return at == len; // an empty index: nothing to search
    if (cur >= UINT32_MAX || maxel < cur || maxel / 2 > cur || (len - at) / sdpe < cur) return false;
    if (maxlevel < 0 || ep >= cur) return false;
    const uint8_t *data0 = p + at;
    at += cur * sdpe;
    // level 0: one neighbour list per point, then its vector and label
    for (size_t i = 0; i < cur; i++) {
        const uint8_t *e = data0 + i * sdpe;
        uint32_t head = u32_at(e);
        if ((head >> 16) != 0 || (head & 0xffff) > maxM0) return false; // no deletion marks in our files
        for (uint32_t j = 0; j < (head & 0xffff); j++)
            if (u32_at(e + 4 + 4 * (size_t)j) >= cur) return false;
        for (uint32_t d = 0; d < dim; d++) {
            float f;
            std::memcpy(&f, e + offdata + 4 * (size_t)d, sizeof f);
            if (!std::isfinite(f)) return false;
        }
    }
    // upper levels: per point a u32 byte size (level * links), then its lists
    std::vector<int> level(cur);
    std::vector<size_t> where(cur);
    for (size_t i = 0; i < cur; i++) {
        unsigned int size;
        if (!take(p, len, at, size)) return false;
        if (size % links != 0 || size / links > (size_t)maxlevel || len - at < size) return false;
        level[i] = (int)(size / links);
        where[i] = at;
        at += size;
    }
    if (at != len || level[ep] != maxlevel) return false;
    for (size_t i = 0; i < cur; i++)
        for (int l = 1; l <= level[i]; l++) {
            const uint8_t *e = p + where[i] + (size_t)(l - 1) * links;
            uint32_t head = u32_at(e);
            if ((head >> 16) != 0 || (head & 0xffff) > maxM) return false;
            for (uint32_t j = 0; j < (head & 0xffff); j++) {
                uint32_t n = u32_at(e + 4 + 4 * (size_t)j);
                if (n >= cur || level[n] < l) return false;
            }
        }
    return true;
}

}  // namespace

struct og_hnsw {
    OgL2 space;
    hnswlib::HierarchicalNSW<float> *index = nullptr;
    explicit og_hnsw(size_t dim) : space(dim) {}
    ~og_hnsw() { delete index; }
};

extern "C" int og_hnsw_new(og_hnsw **out, uint32_t dim, size_t capacity, uint32_t m, uint32_t ef_construction)
{
    *out = nullptr;
    if (dim == 0 || m < 2) return OG_HNSW_INVALID;
    og_hnsw *h = nullptr;
    try {
        h = new og_hnsw(dim);
        h->index = new hnswlib::HierarchicalNSW<float>(&h->space, capacity ? capacity : 1, m, ef_construction, 100);
    } catch (const std::bad_alloc &) {
        delete h;
        return OG_HNSW_NOMEM;
    } catch (...) {
        delete h;
        return OG_HNSW_INVALID;
    }
    *out = h;
    return OG_HNSW_OK;
}

extern "C" int og_hnsw_build(og_hnsw **out, uint32_t dim, const float *vecs, const uint64_t *labels, size_t n,
                             uint32_t m, uint32_t ef_construction, unsigned threads)
{
    int rc = og_hnsw_new(out, dim, n, m, ef_construction);
    if (rc) return rc;
    og_hnsw *h = *out;
    if (threads == 0) threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    if (n < 1000) threads = 1;
    std::atomic<size_t> next(0);
    std::atomic<int> fail(OG_HNSW_OK);
    auto work = [&]() {
        for (;;) {
            size_t i = next.fetch_add(1);
            if (i >= n || fail.load()) return;
            try {
                h->index->addPoint(vecs + i * dim, labels ? labels[i] : i);
            } catch (const std::bad_alloc &) {
                fail.store(OG_HNSW_NOMEM);
            } catch (...) {
                fail.store(OG_HNSW_INVALID);
            }
        }
    };
    // The first point alone: hnswlib's entry point must exist before concurrent inserts.
    if (n) {
        next.store(1);
        try {
            h->index->addPoint(vecs, labels ? labels[0] : 0);
        } catch (...) {
            fail.store(OG_HNSW_NOMEM);
        }
    }
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < threads; t++) pool.emplace_back(work);
    } catch (...) {
        // fewer threads: the calling thread still does the work
    }
    work();
    for (auto &t : pool) t.join();
    if (fail.load()) {
        og_hnsw_free(h);
        *out = nullptr;
        return fail.load();
    }
    return OG_HNSW_OK;
}

extern "C" int og_hnsw_save(const og_hnsw *h, uint8_t **out, size_t *len)
{
    *out = nullptr;
    *len = 0;
    if (!h->index) return OG_HNSW_INVALID; // a loaded empty index is never saved again
    try {
        MemFile f;
        if (f.fd < 0) return OG_HNSW_IO;
        h->index->saveIndex(f.path);
        off_t size = lseek(f.fd, 0, SEEK_END);
        if (size < 0) return OG_HNSW_IO;
        uint8_t *p = static_cast<uint8_t *>(malloc(size ? (size_t)size : 1));
        if (!p) return OG_HNSW_NOMEM;
        size_t got = 0;
        while (got < (size_t)size) {
            ssize_t r = pread(f.fd, p + got, (size_t)size - got, (off_t)got);
            if (r <= 0) {
                free(p);
                return OG_HNSW_IO;
            }
            got += (size_t)r;
        }
        *out = p;
        *len = (size_t)size;
        return OG_HNSW_OK;
    } catch (const std::bad_alloc &) {
        return OG_HNSW_NOMEM;
    } catch (...) {
        return OG_HNSW_IO;
    }
}

extern "C" int og_hnsw_load(og_hnsw **out, uint32_t dim, const uint8_t *p, size_t len)
{
    *out = nullptr;
    if (dim == 0) return OG_HNSW_INVALID;
    og_hnsw *h = nullptr;
    try {
        size_t count = 0;
        if (!well_formed(p, len, dim, &count)) return OG_HNSW_INVALID;
        if (count == 0) { // nothing to search: no hnswlib index at all (see og_hnsw_search)
            *out = new og_hnsw(dim);
            return OG_HNSW_OK;
        }
        MemFile f;
        if (f.fd < 0) return OG_HNSW_IO;
        size_t put = 0;
        while (put < len) {
            ssize_t w = write(f.fd, p + put, len - put);
            if (w <= 0) return OG_HNSW_IO;
            put += (size_t)w;
        }
        h = new og_hnsw(dim);
        h->index = new hnswlib::HierarchicalNSW<float>(&h->space);
        h->index->loadIndex(f.path, &h->space, 0);
        if (h->index->data_size_ != (size_t)dim * sizeof(float)) {
            delete h;
            return OG_HNSW_INVALID;
        }
    } catch (const std::bad_alloc &) {
        delete h;
        return OG_HNSW_NOMEM;
    } catch (...) {
        delete h;
        return OG_HNSW_INVALID;
    }
    *out = h;
    return OG_HNSW_OK;
}

extern "C" void og_hnsw_free(og_hnsw *h) { delete h; }

extern "C" size_t og_hnsw_count(const og_hnsw *h) { return h->index ? h->index->cur_element_count : 0; }

extern "C" int og_hnsw_search(og_hnsw *h, const float *q, size_t k, size_t ef, uint64_t *labels, float *dists,
                              size_t *n)
{
    *n = 0;
    if (k == 0 || !h->index || h->index->cur_element_count == 0) return OG_HNSW_OK;
    try {
        h->index->setEf(std::max(ef, k));
        auto pq = h->index->searchKnn(q, k);
        size_t m = pq.size();
        for (size_t i = m; i-- > 0;) {
            labels[i] = pq.top().second;
            dists[i] = pq.top().first;
            pq.pop();
        }
        *n = m;
        return OG_HNSW_OK;
    } catch (const std::bad_alloc &) {
        return OG_HNSW_NOMEM;
    } catch (...) {
        return OG_HNSW_INVALID;
    }
}
