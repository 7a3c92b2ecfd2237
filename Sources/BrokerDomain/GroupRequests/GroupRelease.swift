import Foundation

/// What was released, when.
package struct GroupRelease: Sendable, Equatable {
    package var releasedAt: Date
    package var cells: [GroupResultCell]
}
