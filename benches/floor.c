/* The whole-process floor for scripts/bench-process.sh: map a little-endian GGUF v2/v3 file
 * and walk its header as benches/floor/mod.rs does (skip strings by their length, check only
 * that each read stays inside the file), then print where the tensor infos end.
 *
 * Built with -DREAD_INTO_MEMORY (floor-read), the header is read into anonymous memory
 * (advised to use huge pages) instead of mapped, as `gguf` reads it: no `gguf` command maps a file, so that another process truncating
 * it cannot kill the reader (SIGBUS). The walk reads on demand, 1 MiB at a time, so it copies
 * its header and at most 1 MiB more, never walking anything twice: the floor for a reader that
 * copies. The difference between the two floors is what the copy costs. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t *base;
static uint64_t size;

static int fail(void) {
    fprintf(stderr, "floor: not a little-endian GGUF v2/v3 header it can walk\n");
    _exit(1);
}

#ifdef READ_INTO_MEMORY
/* The buffer, the file, and how much of it is in the buffer. */
static uint8_t *copy_buf;
static int copy_fd;
static uint64_t have;

/* Reads until bytes up to `end` (at most the file's size) are in the buffer. */
__attribute__((noinline, cold)) static void grow(uint64_t end) {
    while (have < end) {
        uint64_t want = end - have < (1 << 20) ? (1 << 20) : end - have;
        if (want > size - have) want = size - have;
        ssize_t n = read(copy_fd, copy_buf + have, want);
        if (n <= 0) fail();
        have += (uint64_t)n;
    }
}

static inline void need(uint64_t end) {
    if (__builtin_expect(end > have, 0)) grow(end);
}
#else
#define need(end)
#endif

static uint64_t u64_at(uint64_t pos) {
    uint64_t v;
    if (pos > size || size - pos < 8) fail();
    need(pos + 8);
    memcpy(&v, base + pos, 8);
    return v;
}

static uint32_t u32_at(uint64_t pos) {
    uint32_t v;
    if (pos > size || size - pos < 4) fail();
    need(pos + 4);
    memcpy(&v, base + pos, 4);
    return v;
}

/* Where a value of type ty starting at pos ends. */
static uint64_t value_end(uint64_t pos, uint32_t ty) {
    static const uint8_t fixed[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (ty > 12) fail();
    if (ty == 8) return pos + 8 + u64_at(pos);
    if (ty != 9) return pos + fixed[ty];
    uint32_t element = u32_at(pos);
    uint64_t n = u64_at(pos + 4);
    pos += 12;
    if (element == 8) {
        for (uint64_t i = 0; i < n; i++) pos += 8 + u64_at(pos);
        return pos;
    }
    if (element == 9) {
        for (uint64_t i = 0; i < n; i++) pos = value_end(pos, element);
        return pos;
    }
    if (element > 12) fail();
    return pos + n * fixed[element];
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor FILE.gguf\n");
        return 2;
    }
    const char *path = argv[1];
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        return 2;
    }
    size = (uint64_t)st.st_size;
#ifdef READ_INTO_MEMORY
    {
        uint8_t *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED) {
            perror("mmap");
            return 2;
        }
        madvise(buf, size, MADV_HUGEPAGE);
        copy_buf = buf;
        copy_fd = fd;
        base = buf;
    }
#else
    base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
#endif
    uint64_t n_tensors = u64_at(8), n_kv = u64_at(16), pos = 24;
    for (uint64_t i = 0; i < n_kv; i++) {
        pos += 8 + u64_at(pos);
        pos = value_end(pos + 4, u32_at(pos));
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        pos += 8 + u64_at(pos);
        pos += 4 + 8 * (uint64_t)u32_at(pos) + 12;
    }
    if (pos > size) fail();
    printf("%llu\n", (unsigned long long)pos);
    return 0;
}
