/// The client took nothing for the whole stall timeout: the response is cut off rather than ended.
struct StreamStalled: Error {}
