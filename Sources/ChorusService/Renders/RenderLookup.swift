/// Where a render was found (`RenderCatalog.lookup`).
enum RenderLookup {
    case active(ActiveRender)
    case stored(StoredRender)
    /// A shared job queued for, or running on, another instance.
    case remote(SharedQueue.Entry)
}
