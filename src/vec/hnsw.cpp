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
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

extern "C" float og_vec_l2sq(const float *a, const float *b, size_t dim);

namespace {

float l2sq(const void *a, const void *b, const void *param)
{
    return og_vec_l2sq(static_cast<const float *>(a), static_cast<const float *>(b), *static_cast<const size_t *>(param));
}

// Squared L2 through the project's dispatched SIMD kernels.
class OgL2 : public hnswlib::SpaceInterface<float> {
  public:
    explicit OgL2(size_t dim) : dim_(dim) {}
    size_t get_data_size() override { return dim_ * sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return l2sq; }
    void *get_dist_func_param() override { return &dim_; }

  private:
    size_t dim_;
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

extern "C" size_t og_hnsw_count(const og_hnsw *h) { return h->index->cur_element_count; }

extern "C" int og_hnsw_search(og_hnsw *h, const float *q, size_t k, size_t ef, uint64_t *labels, float *dists,
                              size_t *n)
{
    *n = 0;
    if (k == 0 || h->index->cur_element_count == 0) return OG_HNSW_OK;
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
