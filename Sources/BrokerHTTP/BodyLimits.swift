/// The JSON body limit of the contract; import endpoints raise it for themselves.
package let jsonBodyLimit = 16 * 1024 * 1024
/// The import limit of the contract (an iPhone's export.zip).
package let importBodyLimit = 512 * 1024 * 1024
