import Foundation

#if canImport(Glibc)
    import CMalloc
#endif

/// Caps glibc's malloc arenas at one per processor, unless the operator set them (`MALLOC_ARENA_MAX`, or
/// `glibc.malloc.arena_max` in `GLIBC_TUNABLES`). Called first thing in `main`, before the runtime, NIO or
/// PostgresNIO start a thread.
///
/// glibc gives each new thread a heap arena of its own, up to eight per processor, and keeps the memory
/// freed in an arena for that arena's later allocations. A large download passes chunks of 256 KiB between
/// the event loops and the tasks that encode them, so every arena they touched kept chunks of its own: on
/// the 2-core machine the server's resident memory grew by 63–75 MB over the download benchmark's 36
/// downloads, and by 34–40 MB with one arena per processor, at the same speed (bench/README.md, "Issue 33,
/// fifth session"). An arena made before the cap stays; the cap holds for those made after, so it must
/// come before the threads.
func limitMallocArenas() {
    #if canImport(Glibc)
        let environment = ProcessInfo.processInfo.environment
        guard environment["MALLOC_ARENA_MAX"] == nil, environment["GLIBC_TUNABLES"]?.contains("arena_max") != true else { return }
        _ = mallopt(M_ARENA_MAX, Int32(max(1, ProcessInfo.processInfo.activeProcessorCount)))
    #endif
}
