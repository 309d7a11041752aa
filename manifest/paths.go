package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Extensions are the files a directory contributes, cli-runtime's resource.FileExtensions
// (pkg/resource/builder.go); the comparison is exact, so web.YAML is not read, as in kubectl.
var Extensions = []string{".json", ".yaml", ".yml"}

// expand turns one -f argument into the files to read, in kubectl's order: the path itself when
// it is a file, a directory's manifest files in filepath.Walk's lexical order, or the matches of a
// glob pattern that names no file (cli-runtime's expandIfFilePattern).
func expand(p string, recursive bool) ([]string, []error) {
	// cli-runtime's FilenameParam takes these prefixes, exactly, as URLs.
	if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
		return nil, []error{newError(Source{}, nil, "-f takes files, directories and -, not URLs: "+display(p))}
	}
	src := Source{File: display(p)}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		matches, gerr := filepath.Glob(p)
		if gerr != nil {
			return nil, []error{newError(src, gerr, "does not exist, and is not a valid glob pattern")}
		}
		if len(matches) == 0 {
			return nil, []error{newError(src, err, "does not exist")}
		}
		var files []string
		var errs []error
		for _, m := range matches {
			f, e := expandPath(m, recursive)
			files, errs = append(files, f...), append(errs, e...)
		}
		return files, errs
	}
	return expandPath(p, recursive)
}

// expandPath is expand for a path that exists (or existed a moment ago).
func expandPath(p string, recursive bool) ([]string, []error) {
	src := Source{File: display(p)}
	// Stat, not Lstat: a symbolic link named on the command line is followed, a directory's
	// included (filepath.Walk, which cli-runtime uses, would read such a link as one file).
	fi, err := os.Stat(p)
	if err != nil {
		return nil, []error{newError(src, err, pathErrorText(err))}
	}
	if !fi.IsDir() {
		// A named file is read whatever its extension, as cli-runtime's ExpandPathsToFileVisitors
		// does; it may be a pipe (-f <(helm template ...)).
		return []string{p}, nil
	}
	var files []string
	var errs []error
	skipped := walk(p, recursive, &files, &errs)
	if len(files) == 0 && len(errs) == 0 {
		// cli-runtime's Builder.Path: "error reading [dir]: recognized file extensions are
		// [.json .yaml .yml]".
		msg := "has no .json, .yaml or .yml file"
		if skipped {
			msg += " (-R reads its subdirectories)"
		}
		errs = append(errs, newError(src, nil, msg))
	}
	return files, errs
}

// walk appends dir's manifest files to files in filepath.Walk's order (entries sorted by name,
// a subdirectory's files where it sorts), descending into subdirectories when recursive. A
// directory it cannot read is an error and its siblings are still read. It reports whether it
// left out a subdirectory for want of recursive.
//
// As filepath.Walk does, it follows a symbolic link to a file and not one to a directory (so a
// link cannot make a cycle), and it skips what is not a regular file: a FIFO named x.yaml would
// block the read.
func walk(dir string, recursive bool, files *[]string, errs *[]error) (skipped bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		*errs = append(*errs, newError(Source{File: display(dir)}, err, pathErrorText(err)))
		// ReadDir returns what it read before the error, sorted.
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			mode = 0
		}
		switch {
		case mode.IsDir():
			if !recursive {
				skipped = true
				continue
			}
			skipped = walk(path, recursive, files, errs) || skipped
		case mode.IsRegular() && slices.Contains(Extensions, filepath.Ext(path)):
			*files = append(*files, path)
		}
	}
	return skipped
}

// pathErrorText is the reason of an *fs.PathError without the path, which the message already
// starts with: "permission denied", not "open deploy/web.yaml: permission denied".
func pathErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return "does not exist"
		}
		return pe.Err.Error()
	}
	return err.Error()
}
