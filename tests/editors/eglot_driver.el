;;; eglot_driver.el --- drives Emacs in batch mode for scripts/test-editors.sh -*- lexical-binding: t -*-
;; Loads Debian's elpa-eglot (emacs -Q skips site-start), then the eglot snippet of
;; docs/integrations.md ($IDEMLINT_SNIPPET), visits $IDEMLINT_FILE in java-mode, connects
;; eglot as `M-x eglot' would (eglot-ensure waits for a command loop that batch mode does
;; not have), waits (at most 60 s) for flymake diagnostics and writes one line per
;; diagnostic to $IDEMLINT_EDITOR_OUT ("LINE:COL TYPE MESSAGE-START"). Exits 1 without any.
(require 'cl-lib)
(dolist (dir '("/usr/share/emacs/site-lisp/elpa" "/usr/share/emacs/site-lisp/elpa-src"))
  (when (file-directory-p dir)
    (let ((default-directory dir))
      (normal-top-level-add-subdirs-to-load-path))))
(load (getenv "IDEMLINT_SNIPPET") nil t)
(require 'eglot)
(setq eglot-sync-connect t)
(let ((buf (find-file-noselect (getenv "IDEMLINT_FILE")))
      (out (getenv "IDEMLINT_EDITOR_OUT"))
      (waited 0)
      (server nil))
  (with-current-buffer buf
    (java-mode)
    (setq server (apply #'eglot--connect (eglot--guess-contact)))
    ;; flymake defers its first run to the command loop, which batch mode lacks: start
    ;; it by hand (again each second, until eglot has reported).
    (while (and (null (flymake-diagnostics)) (< waited 600))
      (when (zerop (% waited 10))
        (flymake-start))
      (accept-process-output nil 0.1)
      (cl-incf waited))
    (let ((lines (mapcar (lambda (d)
                           (save-excursion
                             (goto-char (flymake-diagnostic-beg d))
                             (format "%d:%d %s %s\n" (line-number-at-pos)
                                     (1+ (current-column))
                                     (flymake-diagnostic-type d)
                                     (truncate-string-to-width
                                      (flymake-diagnostic-text d) 70))))
                         (flymake-diagnostics))))
      (with-temp-file out
        (dolist (l lines) (insert l))
        (insert (format "server %s\n"
                        (mapconcat #'identity
                                   (process-command (jsonrpc--process server))
                                   " "))))
      (kill-emacs (if lines 0 1)))))
