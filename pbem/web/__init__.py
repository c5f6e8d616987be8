"""The web entry point: each game's live page for each of its readers, served by `pbem serve --http`.

An entry point like `pbem.cli`: it routes HTTP requests to the service
layer's use cases (`pbem.service.pages`) and renders their answers with the
templates under `templates/web/`. Nothing here decides anything about the
game; orders written in a page go into the inbox as the mail they stand for
(docs/web.md).
"""
