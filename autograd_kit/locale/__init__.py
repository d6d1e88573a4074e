"""The kit's message catalogs, and the small tools that keep them.

Layout (GNU gettext's, which Python's :mod:`gettext` reads)::

    locale/autograd_kit.pot                      every English message (the template)
    locale/zh/LC_MESSAGES/autograd_kit.po        Chinese translations (edited by people)
    locale/zh/LC_MESSAGES/autograd_kit.mo        the same, compiled (read by the kit)
    locale/ru/LC_MESSAGES/...                    Russian, likewise

The tools, in :mod:`.catalogs`, run as ``python -m autograd_kit.locale``:

* ``extract``: find every ``_("...")``, ``N_("...")`` and ``ngettext("...", "...", n)``
  in the kit's code (by reading the syntax tree, not by running it) and write the
  ``.pot`` template;
* ``update``: bring each ``.po`` in line with the template (new messages are added
  untranslated, messages gone from the code are dropped, translations are kept);
* ``compile``: turn each ``.po`` into its ``.mo``;
* ``check``: say which messages are missing a translation, and exit 1 if any are.
"""
