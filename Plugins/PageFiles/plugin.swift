import PackagePlugin

/// Writes `PageFiles.swift` for the target it is applied to (PulseWeb): one table of every file
/// the target embeds (`PackageResources`, SwiftPM's `embedInCode` of the `Resources` folder) by
/// its path on the page, so that a file added to the folder is served with no list to edit
/// (issue 55; docs/ARCHITECTURE.md, "Adding a tab").
@main
struct PageFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let files = target.sourceFiles.filter { $0.type == .resource }.map(\.url)
        let output = context.pluginWorkDirectoryURL.appending(path: "PageFiles.swift")
        return [
            .buildCommand(
                displayName: "The page's files as one table (\(files.count))",
                executable: try context.tool(named: "page-files-table").url,
                arguments: [output.path()] + files.map(\.lastPathComponent),
                inputFiles: files, outputFiles: [output])
        ]
    }
}
