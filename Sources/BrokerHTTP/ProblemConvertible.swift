/// A domain error that knows its problem document; each capability has one such enum.
package protocol ProblemConvertible: Error {
    var problem: Problem { get }
}
